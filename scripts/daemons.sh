# Sourced, not run: the daemon helpers the local clusters' setups share (setup-kubernetes.sh,
# setup-temporal-cluster.sh). Each setup defines LOGS (daemon logs), RUN (pid files) and die before using them.

pid_of() { cat "$RUN/$1.pid" 2>/dev/null || true; }
alive() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && [ -d "/proc/$pid" ]; }
# running NAME [WORD]: alive, and its command line names WORD (default NAME): not a recycled pid.
running() { alive "$1" && grep -qa -- "${2:-$1}" "/proc/$(pid_of "$1")/cmdline" 2>/dev/null; }
log_and_die() { tail -n 25 "$LOGS/$1.log" >&2 || true; die "$1 $2; its log is $LOGS/$1.log"; }
wait_for() { # wait_for NAME SECONDS COMMAND...: until COMMAND succeeds, or die showing NAME's log
  # Alive, not running: a daemon just forked has not yet exec'd, so its command line does not name it yet.
  local name="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  while ! "$@" >/dev/null 2>&1; do
    alive "$name" || log_and_die "$name" "exited"
    [ "$SECONDS" -lt "$deadline" ] || log_and_die "$name" "is not ready after ${secs}s"
    sleep 0.25
  done
}
