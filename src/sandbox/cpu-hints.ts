// CPU-count hints for a sandbox with a CPU limit (Task Folder Verifiers § Environment variables and secrets;
// NeMo Gym 0.7, `derive_cpu_env`): tools that size their pools by the host's cores see the
// limit instead. The names and the floored count (at least 1) are NeMo Gym's sandbox helpers' (`cpu_cap_env`).

export const CPU_HINT_VARIABLES = [
  'OMP_NUM_THREADS', 'OMP_THREAD_LIMIT', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'NUMEXPR_NUM_THREADS',
  'VECLIB_MAXIMUM_THREADS', 'BLIS_NUM_THREADS', 'PYTHON_CPU_COUNT', 'NUMBA_NUM_THREADS', 'LOKY_MAX_CPU_COUNT',
  'POLARS_MAX_THREADS', 'PYTEST_XDIST_AUTO_NUM_WORKERS', 'DJANGO_TEST_PROCESSES', 'GOMAXPROCS', 'CARGO_BUILD_JOBS',
  'RAYON_NUM_THREADS', 'RUST_TEST_THREADS', 'UV_THREADPOOL_SIZE', 'CMAKE_BUILD_PARALLEL_LEVEL',
] as const;

/**
 * The hints for `cpus`, minus every variable already set (by the task, or by the image when its configuration
 * is on record): those win.
 */
export function cpuHints(cpus: number | null | undefined, alreadySet: Iterable<string> = []): Record<string, string> {
  if (!cpus || cpus <= 0) return {};
  const set = new Set(alreadySet);
  const n = String(Math.max(1, Math.floor(cpus)));
  return Object.fromEntries(CPU_HINT_VARIABLES.filter((v) => !set.has(v)).map((v) => [v, n]));
}
