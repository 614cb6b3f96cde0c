// "Stopping" a pod's sandbox (a separate verifier stops the agent's sandbox, then grades in a pod of its own): a pod
// cannot be stopped and started again, so every process of the main container but its keep-alive is ended, as
// `docker stop -t 2` ends a container's (TERM, then KILL after 2 s). The files stay, as in a stopped container, and a
// later start finds the keep-alive still there, with none of the agent's processes, as `docker start` does.
// Processes of other containers of the pod (a shared PID namespace) are told apart by their cgroup: every process of
// a container, exec'd ones too, is in the container's, and /proc/<pid>/cgroup is readable without CAP_SYS_PTRACE
// (a process's namespaces are not, for another user's process).

/**
 * Run as root in the main container. The keep-alive is main's oldest process (the container's own, started before
 * any exec); a zombie counts as ended (the pod's pause process or the runtime reaps it).
 */
export const STOP_PROCESSES_SCRIPT = [
  'mine=$(cat /proc/self/cgroup) keep= oldest= pids= victims= alive=',
  'state() { s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; echo "$s"; }',
  'for d in /proc/[0-9]*; do',
  '  p=${d#/proc/}',
  '  [ "$p" = "$$" ] && continue',
  '  [ "$(cat "$d/cgroup" 2>/dev/null)" = "$mine" ] || continue',
  '  s=$(state "$p") || continue',
  // After the ")" of comm, field 1 is the state and field 20 the start time (stat's fields 3 and 22).
  '  set -- $s',
  '  [ "$1" = Z ] && continue',
  '  t=${20}',
  '  if [ -z "$oldest" ] || [ "$t" -lt "$oldest" ]; then oldest=$t keep=$p; fi',
  '  pids="$pids $p"',
  'done',
  'for p in $pids; do [ "$p" = "$keep" ] || victims="$victims $p"; done',
  '[ -z "$victims" ] && exit 0',
  'kill -TERM $victims 2>/dev/null',
  'i=0; while [ $i -lt 20 ]; do',
  '  alive=; for p in $victims; do s=$(state "$p") && [ "${s%% *}" != Z ] && alive="$alive $p"; done',
  '  [ -z "$alive" ] && exit 0',
  '  sleep 0.1; i=$((i+1))',
  'done',
  'kill -KILL $alive 2>/dev/null',
  'exit 0',
].join('\n');
