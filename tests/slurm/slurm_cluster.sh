# Sourced by the SLURM integration test: a real SLURM cluster of N nodes on this one machine
# (../shared/reference/slurm-on-one-machine.md): its own munged (own key and socket), slurmctld and one
# slurmd per node, everything under $CLUSTER_DIR, loopback addresses only, every daemon stopped by
# pid in cluster_stop. Needs root (slurmd starts jobs as their user).
#
#   cluster_start DIR NODES   -> exports SLURM_CONF; returns 1 with $CLUSTER_WHY when SLURM cannot start
#   cluster_stop

CLUSTER_PIDS=()
CLUSTER_HOSTS_LINE=""

free_port_base() {  # a base port with $1 free ports after it
  local n=$1 base p used
  used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
  for base in $(shuf -i 20000-40000 -n 50); do
    local ok=1
    for ((p = base; p < base + n; p++)); do
      if grep -qx "$p" <<<"$used"; then ok=0; break; fi
    done
    if [ $ok = 1 ]; then echo "$base"; return 0; fi
  done
  return 1
}

cluster_start() {
  CLUSTER_DIR=$1
  local nodes=$2 host i base
  CLUSTER_WHY=""
  for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo ss; do
    command -v "$tool" >/dev/null || { CLUSTER_WHY="$tool not installed (apt-get install slurm-wlm munge)"; return 1; }
  done
  [ "$(id -u)" = 0 ] || { CLUSTER_WHY="slurmd must run as root"; return 1; }
  host=$(hostname -s)
  mkdir -p "$CLUSTER_DIR/state" "$CLUSTER_DIR/munge"
  # munge: a fresh key and socket of our own, so nothing here touches a munged the machine may run.
  dd if=/dev/urandom of="$CLUSTER_DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 700 "$CLUSTER_DIR/munge"
  chmod 400 "$CLUSTER_DIR/munge/munge.key"
  munged --force --foreground --key-file="$CLUSTER_DIR/munge/munge.key" --socket="$CLUSTER_DIR/munge/munge.socket" \
    --pid-file="$CLUSTER_DIR/munge/munged.pid" --seed-file="$CLUSTER_DIR/munge/munged.seed" \
    --log-file="$CLUSTER_DIR/munge/munged.log" >"$CLUSTER_DIR/munge/munged.out" 2>&1 &
  CLUSTER_PIDS+=($!)
  for i in $(seq 50); do [ -S "$CLUSTER_DIR/munge/munge.socket" ] && break; sleep 0.1; done
  if ! munge -n -S "$CLUSTER_DIR/munge/munge.socket" | unmunge -S "$CLUSTER_DIR/munge/munge.socket" >/dev/null 2>&1; then
    CLUSTER_WHY="munged did not start: $(tail -3 "$CLUSTER_DIR/munge/munged.out" "$CLUSTER_DIR/munge/munged.log" 2>/dev/null | tr '\n' ' ')"
    return 1
  fi
  base=$(free_port_base $((nodes + 1))) || { CLUSTER_WHY="no free ports"; return 1; }
  cat >"$CLUSTER_DIR/slurm.conf" <<CONF
ClusterName=scaleproftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$CLUSTER_DIR/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SlurmUser=root
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
StateSaveLocation=$CLUSTER_DIR/state
SlurmctldPidFile=$CLUSTER_DIR/slurmctld.pid
SlurmctldLogFile=$CLUSTER_DIR/slurmctld.log
SlurmdSpoolDir=$CLUSTER_DIR/slurmd.%n
SlurmdPidFile=$CLUSTER_DIR/slurmd.%n.pid
SlurmdLogFile=$CLUSTER_DIR/slurmd.%n.log
NodeName=spn[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 1))-$((base + nodes)) CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=spn[1-$nodes] Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$CLUSTER_DIR/slurm.conf
  # Node names must resolve for the rendezvous address taken from the node list. The line names this
  # cluster's folder, so each cluster on the machine removes only its own: with one line shared by
  # all, the first test run to stop removed it under the others, whose jobs then failed to resolve spn1.
  CLUSTER_HOSTS_LINE="127.0.0.1 $(seq -f 'spn%g' -s ' ' 1 "$nodes") # scaleprof slurm test $CLUSTER_DIR"
  grep -qxF "$CLUSTER_HOSTS_LINE" /etc/hosts || echo "$CLUSTER_HOSTS_LINE" >>/etc/hosts
  slurmctld -D -i -f "$SLURM_CONF" >"$CLUSTER_DIR/slurmctld.out" 2>&1 &
  CLUSTER_PIDS+=($!)
  for i in $(seq 1 "$nodes"); do
    mkdir -p "$CLUSTER_DIR/slurmd.spn$i"
    slurmd -D -N "spn$i" -f "$SLURM_CONF" >"$CLUSTER_DIR/slurmd.spn$i.out" 2>&1 &
    CLUSTER_PIDS+=($!)
  done
  for i in $(seq 150); do
    if [ "$(sinfo -h -o '%t %D' 2>/dev/null | awk '$1=="idle"{s+=$2} END{print s+0}')" = "$nodes" ]; then return 0; fi
    sleep 0.2
  done
  CLUSTER_WHY="the $nodes nodes did not become idle: $(sinfo 2>&1 | tail -3 | tr '\n' ' ') $(tail -3 "$CLUSTER_DIR/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
  return 1
}

cluster_stop() {
  local pid i n=${#CLUSTER_PIDS[@]}
  # Jobs first (their slurmstepd and processes are not ours to kill by pid), then slurmd and
  # slurmctld, munged last (they need it to the end).
  if [ -n "${SLURM_CONF:-}" ] && [ "$n" -gt 2 ]; then
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      scancel $jobs 2>/dev/null || true
      for i in $(seq 50); do [ -z "$(squeue -h -t R,CG -o %i 2>/dev/null)" ] && break; sleep 0.2; done
    fi
  fi
  for ((i = n - 1; i >= 0; i--)); do
    kill "${CLUSTER_PIDS[$i]}" 2>/dev/null || true
    [ "$i" = 1 ] && sleep 0.5
  done
  for i in $(seq 50); do
    local alive=0
    for pid in "${CLUSTER_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${CLUSTER_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if [ -n "$CLUSTER_HOSTS_LINE" ]; then
    grep -vxF "$CLUSTER_HOSTS_LINE" /etc/hosts >"/etc/hosts.scaleprof-$$" && cat "/etc/hosts.scaleprof-$$" >/etc/hosts
    rm -f "/etc/hosts.scaleprof-$$"
  fi
}

cluster_alive_pids() {  # the daemons still running (should print nothing after cluster_stop)
  local pid
  for pid in "${CLUSTER_PIDS[@]}"; do ps -p "$pid" -o pid=,comm= 2>/dev/null || true; done
}
