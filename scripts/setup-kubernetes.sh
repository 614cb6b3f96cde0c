#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, built from source once (no binary downloads):
#   bash scripts/setup-kubernetes.sh          build (once), start (or reuse), write ~/.berth/kubernetes/kubeconfig
#   bash scripts/setup-kubernetes.sh --stop   remove its pods, stop every daemon it started, remove its links
# kube-apiserver, kube-controller-manager, kube-scheduler and kubelet come from the k8s.io/kubernetes Go module
# (a generated wrapper module, cached under ~/.berth/tools/kubernetes-<version>/); etcd, containerd, the CNI
# plugins and the image registry from Debian. Everything it runs is its own: a containerd with its own socket,
# root and CNI bridge beside the Docker engine's, state under ~/.berth/kubernetes/, logs under
# ~/.berth/logs/kubernetes/. A second run on a ready machine takes seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BERTH_HOME="${BERTH_HOME:-$HOME/.berth}"
K8S_VERSION="v1.34.4"          # go.mod asks Go 1.24; the last minor that runs on cgroup v1 by default (1.35 refuses it)
TOOLS="$BERTH_HOME/tools/kubernetes-$K8S_VERSION"
BIN="$TOOLS/bin"
STATE="$BERTH_HOME/kubernetes"
LOGS="$BERTH_HOME/logs/kubernetes"
PKI="$STATE/pki"
RUN="$STATE/run"
KUBECONFIG_OUT="$STATE/kubeconfig"

# Loopback ports, and address ranges clear of Docker's pools (172.16.0.0/12) and of Berth's own episode subnet
# pool (10.213.0.0/16, src/sandbox/docker/group-network.ts).
ETCD_PORT=23790
ETCD_PEER_PORT=23800
APISERVER_PORT=16443
REGISTRY_PORT=5050
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
CONTROLLER_MANAGER_PORT=10257
SCHEDULER_PORT=10259
POD_CIDR="10.229.0.0/20"
SERVICE_CIDR="10.229.128.0/24"
SERVICE_IP="10.229.128.1"
# The kubelet refuses a loopback node IP: the node's address is on a link of our own (an empty bridge: this
# kernel has no dummy links), so nothing leaves the machine and nothing listens on eth0.
NODE_LINK="berth-k8s-node"
NODE_IP="10.229.255.1"
BRIDGE="berth-k8s0"
NODE_NAME="berth-node"
PAUSE_IMAGE="berth.local/pause:$K8S_VERSION"
CONTAINERD_SOCK="$STATE/containerd/containerd.sock"
DAEMONS=(registry etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet)

mkdir -p "$TOOLS" "$BIN" "$STATE" "$LOGS" "$PKI" "$RUN"
step_start=0
step() { step_start=$(date +%s.%N); printf 'setup kubernetes: %-18s ' "$1"; }
done_step() { printf '%s (%.1fs)\n' "$1" "$(echo "$(date +%s.%N) - $step_start" | bc)"; }
die() { echo; echo "setup kubernetes: error: $*" >&2; exit 1; }
# The lock (fd 9) is not handed down: a daemon holding it would block every later setup.
detach() { local log="$1"; shift; setsid nohup "$@" >"$log" 2>&1 </dev/null 9>&- & echo $! ; }

# One setup at a time on this machine (two test files may ask at once): the second waits, then reuses.
exec 9>"$STATE/.lock"
flock 9

# shellcheck source=daemons.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"
start_daemon() { local name="$1"; shift; detach "$LOGS/$name.log" "$@" >"$RUN/$name.pid"; }
api() { # api METHOD PATH: the apiserver as the admin, JSON on stdout
  curl -sf --max-time 10 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" -X "$1" "https://127.0.0.1:$APISERVER_PORT$2"
}

# --- stop ----------------------------------------------------------------------------------------
stop_pid() {
  local name="$1" pid; pid=$(pid_of "$name")
  running "$name" || { rm -f "$RUN/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do [ -d "/proc/$pid" ] || break; sleep 0.25; done
  [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$RUN/$name.pid"
}
ctr_k8s() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }
stop_cluster() {
  step stop
  if running kube-apiserver && running kubelet; then
    # Pods first, so the kubelet tears their sandboxes down through CNI (addresses and NAT rules released).
    for ns in $(api GET /api/v1/namespaces | python3 -c 'import json,sys; print(*[n["metadata"]["name"] for n in json.load(sys.stdin)["items"]])' 2>/dev/null); do
      api DELETE "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
    done
    for _ in $(seq 1 120); do
      [ -z "$(ctr_k8s tasks ls -q 2>/dev/null)" ] && break; sleep 0.25
    done
  fi
  for name in kubelet kube-scheduler kube-controller-manager kube-apiserver; do stop_pid "$name"; done
  if running containerd; then
    for t in $(ctr_k8s tasks ls -q 2>/dev/null); do ctr_k8s tasks kill -s KILL "$t" >/dev/null 2>&1 || true; done
    sleep 0.5
    for t in $(ctr_k8s tasks ls -q 2>/dev/null); do ctr_k8s tasks delete -f "$t" >/dev/null 2>&1 || true; done
  fi
  for name in containerd etcd registry; do stop_pid "$name"; done
  # The kubelet's root (it makes it a shared mount of itself) and the pod mounts under it, deepest first.
  { grep -o " $STATE/kubelet[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  for rule in "-i $BRIDGE -j ACCEPT" "-o $BRIDGE -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"; do
    # shellcheck disable=SC2086
    iptables -D FORWARD $rule 2>/dev/null || true
  done
  iptables -t nat -D PREROUTING -s "$POD_CIDR" -d "$SERVICE_IP/32" -p tcp --dport 443 -j DNAT --to-destination "127.0.0.1:$APISERVER_PORT" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  ip link del "$NODE_LINK" 2>/dev/null || true
  done_step "stopped (state kept in $STATE)"
}
if [ "${1:-}" = "--stop" ]; then stop_cluster; exit 0; fi
[ -z "${1:-}" ] || die "unknown argument '$1' (use: npm run setup -- kubernetes [--stop])"

# --- Debian packages -------------------------------------------------------------------------------
step packages
missing=()
for pair in etcd:etcd-server containerd:containerd ctr:containerd runc:runc docker-registry:docker-registry \
            openssl:openssl curl:curl gcc:gcc ip:iproute2 iptables:iptables flock:util-linux bc:bc; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$LOGS/apt.log" 2>&1 \
    || die "apt-get install ${missing[*]} failed; see $LOGS/apt.log"
  done_step "installed ${missing[*]}"
else
  done_step "present"
fi

# --- Kubernetes binaries, built from the Go module ------------------------------------------------
write_wrapper_module() {
  local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  # k8s.io/kubernetes replaces its k8s.io/* staging modules with folders of its own tree; the published
  # module of the same name at v0.<minor>.<patch> is that folder's content.
  {
    echo "module berth.local/kubernetes-build"
    echo
    echo "go 1.24.0"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    for c in "${COMPONENTS[@]}"; do echo "tool k8s.io/kubernetes/cmd/$c"; done
    echo
    sed -nE 's#^\s*(replace\s+)?(k8s\.io/[^ ]+) => \./staging/src/.*#\2#p' "$gomod" | sort -u \
      | while read -r m; do echo "replace $m => $m v0.${K8S_VERSION#v1.}"; done
  } >"$TOOLS/build/go.mod"
}
step binaries
need=()
for c in "${COMPONENTS[@]}"; do [ -x "$BIN/$c" ] || need+=("$c"); done
if [ "${#need[@]}" -eq 0 ]; then
  done_step "cached in $BIN"
else
  command -v go >/dev/null 2>&1 || die "building Kubernetes needs Go >= 1.24 (golang-go from Debian is older: install a newer Go)"
  mkdir -p "$TOOLS/build"
  echo "building ${need[*]} (first time: about 15 min on 2 cores; log $LOGS/build.log)"
  (
    cd "$TOOLS/build"
    write_wrapper_module
    nice -n 19 go mod tidy
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
    for c in "${need[@]}"; do
      s=$(date +%s)
      nice -n 19 go build -o "$BIN/$c.tmp" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$c"
      mv "$BIN/$c.tmp" "$BIN/$c"
      echo "built $c in $(( $(date +%s) - s ))s"
    done
  ) >>"$LOGS/build.log" 2>&1 || { tail -n 20 "$LOGS/build.log" >&2; die "go build failed; see $LOGS/build.log"; }
  done_step "built $(grep -o 'built .* in [0-9]*s' "$LOGS/build.log" | tail -n "${#need[@]}" | tr '\n' ';')"
fi

# --- pause image: a static binary compiled here -----------------------------------------------------
step pause
if [ ! -f "$TOOLS/pause.tar" ]; then
  pause_dir=$(mktemp -d)
  cat >"$pause_dir/pause.c" <<'EOF'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, quit); signal(SIGTERM, quit); signal(SIGCHLD, reap);
  for (;;) pause();
}
EOF
  mkdir -p "$pause_dir/root"
  gcc -Os -static -o "$pause_dir/root/pause" "$pause_dir/pause.c" || die "could not compile the pause binary"
  # The local Docker engine packs it as an image archive that ctr imports.
  docker_cli=/usr/bin/docker; [ -x "$docker_cli" ] || docker_cli=docker
  tar -C "$pause_dir/root" -c . | "$docker_cli" import -c 'ENTRYPOINT ["/pause"]' - "$PAUSE_IMAGE" >/dev/null \
    && "$docker_cli" save "$PAUSE_IMAGE" >"$TOOLS/pause.tar.tmp" || die "docker could not pack the pause image (is the engine up? npm run setup)"
  "$docker_cli" rmi "$PAUSE_IMAGE" >/dev/null 2>&1 || true
  mv "$TOOLS/pause.tar.tmp" "$TOOLS/pause.tar"
  rm -rf "$pause_dir"
  done_step "compiled, $TOOLS/pause.tar"
else
  done_step "cached"
fi

# --- certificates --------------------------------------------------------------------------------------
step certificates
sign() { # sign NAME SUBJECT [SANS]: a client or serving certificate from the cluster's CA
  local name="$1" subj="$2" sans="${3:-}"
  [ -f "$PKI/$name.crt" ] && return 0
  openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  local ext="$PKI/$name.ext"
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$sans" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$sans"; else echo "extendedKeyUsage=clientAuth"; fi
  } >"$ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 3650 \
    -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}
if [ ! -f "$PKI/ca.crt" ]; then
  rm -f "$PKI"/*.crt "$PKI"/*.key
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 \
    -subj "/CN=berth-kubernetes-ca" 2>/dev/null
fi
sign apiserver "/CN=kube-apiserver" \
  "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$NODE_IP,IP:$SERVICE_IP"
sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
sign admin "/O=system:masters/CN=berth-admin"
sign controller-manager "/CN=system:kube-controller-manager"
sign scheduler "/CN=system:kube-scheduler"
sign kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
[ -f "$PKI/sa.key" ] || { openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null; openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null; }
done_step "$PKI"

kubeconfig() { # kubeconfig FILE CERT: credentials of one client, against the loopback apiserver
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: berth
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: berth
  context: {cluster: berth, user: $2}
current-context: berth
EOF
}
kubeconfig "$KUBECONFIG_OUT" admin
kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
kubeconfig "$STATE/scheduler.kubeconfig" scheduler
kubeconfig "$STATE/kubelet.kubeconfig" kubelet

# --- node address --------------------------------------------------------------------------------------
ip link show "$NODE_LINK" >/dev/null 2>&1 || { ip link add "$NODE_LINK" type bridge && ip addr add "$NODE_IP/32" dev "$NODE_LINK" && ip link set "$NODE_LINK" up; } \
  || die "could not create the link $NODE_LINK for the node address $NODE_IP"

# --- registry ------------------------------------------------------------------------------------------
step registry
mkdir -p "$STATE/registry"
cat >"$STATE/registry.yml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $STATE/registry}
  delete: {enabled: true}
http: {addr: 127.0.0.1:$REGISTRY_PORT}
EOF
registry_answers() { curl -sf --max-time 2 "http://127.0.0.1:$REGISTRY_PORT/v2/" >/dev/null; }
if running registry; then done_step "running at 127.0.0.1:$REGISTRY_PORT"; else
  registry_answers && die "port $REGISTRY_PORT answers but is not this setup's registry: free it"
  start_daemon registry docker-registry serve "$STATE/registry.yml"
  wait_for registry 20 registry_answers
  done_step "started at 127.0.0.1:$REGISTRY_PORT"
fi

# --- etcd ----------------------------------------------------------------------------------------------
step etcd
etcd_answers() { curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
if running etcd; then done_step "running at 127.0.0.1:$ETCD_PORT"; else
  start_daemon etcd etcd --name berth --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "berth=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" --log-level warn
  wait_for etcd 30 etcd_answers
  done_step "started at 127.0.0.1:$ETCD_PORT"
fi

# --- containerd (its own, beside the Docker engine's) ----------------------------------------------------
step containerd
mkdir -p "$STATE/containerd/certs.d/127.0.0.1:$REGISTRY_PORT" "$STATE/cni/net.d" "$STATE/cni/networks"
cat >"$STATE/containerd/certs.d/127.0.0.1:$REGISTRY_PORT/hosts.toml" <<EOF
server = "http://127.0.0.1:$REGISTRY_PORT"
[host."http://127.0.0.1:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF
cat >"$STATE/cni/net.d/10-berth.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "berth-pods",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$STATE/cni/networks"}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
plugin_dir = ""
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$STATE/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_unprivileged_ports = false
  # This machine does not let root lower a process's OOM score (the sandbox's -998 fails in runc): keep scores at
  # or above containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$STATE/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$STATE/containerd/certs.d"
EOF
containerd_answers() { ctr --address "$CONTAINERD_SOCK" version; }
if running containerd; then done_step "running at $CONTAINERD_SOCK"; else
  start_daemon containerd containerd --config "$STATE/containerd/config.toml"
  wait_for containerd 30 containerd_answers
  done_step "started at $CONTAINERD_SOCK"
fi
if ! ctr_k8s images ls -q | grep -qx "$PAUSE_IMAGE"; then
  ctr_k8s images import "$TOOLS/pause.tar" >/dev/null || die "ctr could not import $TOOLS/pause.tar"
fi

# --- the kubernetes Service for pods --------------------------------------------------------------------
# There is no kube-proxy, so Service ClusterIPs do not route; but a client in a pod (a Berth worker run from
# deploy/kubernetes/) reaches the apiserver through the kubernetes Service, as in-cluster credentials name it. The
# one rule kube-proxy would keep for it: pods' traffic to $SERVICE_IP:443 goes to the loopback apiserver (the pods'
# bridge, made here ahead of the CNI plugin, which adopts it, may route to loopback).
ip link show "$BRIDGE" >/dev/null 2>&1 || { ip link add "$BRIDGE" type bridge && ip link set "$BRIDGE" up; } \
  || die "could not create the pods' bridge $BRIDGE"
sysctl -qw "net.ipv4.conf.$BRIDGE.route_localnet=1" || die "could not let $BRIDGE route to loopback (sysctl net.ipv4.conf.$BRIDGE.route_localnet)"
# The Docker engine's FORWARD policy is DROP, and bridged traffic passes through it too (br_netfilter), so pods reach
# neither each other nor anything beyond this machine until their traffic is let through, as the CNI firewall plugin
# would (a sandbox pod calls the model gateway of a worker in another pod; that worker fetches installed agents from
# the npm registry). What a sandbox may reach in each phase is its pod's own rules' (egress.ts), not these.
for rule in "-i $BRIDGE -j ACCEPT" "-o $BRIDGE -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"; do
  # shellcheck disable=SC2086
  iptables -C FORWARD $rule 2>/dev/null || iptables -I FORWARD 1 $rule || die "could not let the pods' traffic through FORWARD ($rule)"
done
SERVICE_RULE=(PREROUTING -s "$POD_CIDR" -d "$SERVICE_IP/32" -p tcp --dport 443 -j DNAT --to-destination "127.0.0.1:$APISERVER_PORT")
iptables -t nat -C "${SERVICE_RULE[@]}" 2>/dev/null || iptables -t nat -A "${SERVICE_RULE[@]}" \
  || die "could not add the nat rule for the kubernetes Service ($SERVICE_IP:443)"

# --- control plane -----------------------------------------------------------------------------------------
step kube-apiserver
apiserver_ready() { curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://127.0.0.1:$APISERVER_PORT/readyz" | grep -qx ok; }
if running kube-apiserver; then done_step "running at https://127.0.0.1:$APISERVER_PORT"; else
  start_daemon kube-apiserver "$BIN/kube-apiserver" \
    --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --advertise-address="$NODE_IP" \
    --endpoint-reconciler-type=none \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --client-ca-file="$PKI/ca.crt" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
    --profiling=false --v=1
  wait_for kube-apiserver 300 apiserver_ready
  done_step "started at https://127.0.0.1:$APISERVER_PORT"
fi

step controllers
did=""
if ! running kube-controller-manager; then
  start_daemon kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$STATE/controller-manager.kubeconfig" --authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$CONTROLLER_MANAGER_PORT" --leader-elect=false \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --use-service-account-credentials=true --allocate-node-cidrs=false --v=1
  did="controller-manager"
fi
if ! running kube-scheduler; then
  start_daemon kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig="$STATE/scheduler.kubeconfig" --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false --v=1
  did="$did scheduler"
fi
done_step "${did:-running}"

# --- kubelet -----------------------------------------------------------------------------------------------
step kubelet
cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
# No cluster DNS (CoreDNS is not buildable here without a download): pods resolve through the host's resolver.
resolvConf: /etc/resolv.conf
# A shared test machine: never evict or collect images because other work fills the disk.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 250
serializeImagePulls: false
EOF
kubelet_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz" | grep -qx ok; }
if running kubelet; then done_step "running as node $NODE_NAME"; else
  start_daemon kubelet "$BIN/kubelet" --config="$STATE/kubelet.yaml" --kubeconfig="$STATE/kubelet.kubeconfig" \
    --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1
  wait_for kubelet 180 kubelet_healthy
  done_step "started as node $NODE_NAME"
fi

step node
# Ready as the kubelet reports it, and schedulable: the controller-manager has lifted the not-ready taint.
node_ready() {
  api GET "/api/v1/nodes/$NODE_NAME" | python3 -c 'import json,sys
n = json.load(sys.stdin)
ready = any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
sys.exit(0 if ready and not n["spec"].get("taints") else 1)'
}
wait_for kubelet 180 node_ready
# Pods need their namespace's default service account, which the controller-manager creates.
wait_for kube-controller-manager 60 api GET /api/v1/namespaces/default/serviceaccounts/default
done_step "Ready; kubeconfig $KUBECONFIG_OUT"
# Where the cluster is, for the test helper (test/helpers/kubernetes.ts) and anyone scripting against it.
cat >"$STATE/endpoints.json" <<EOF2
{"version": "$K8S_VERSION", "kubeconfig": "$KUBECONFIG_OUT", "apiserver": "https://127.0.0.1:$APISERVER_PORT",
 "registry": "127.0.0.1:$REGISTRY_PORT", "node": "$NODE_NAME", "podCidr": "$POD_CIDR", "serviceCidr": "$SERVICE_CIDR"}
EOF2
