# A one-node Slurm cluster on localhost, for the tests: munged, slurmctld and slurmd run as root
# from a scratch directory (configuration, state, spool, logs, munge key and socket), in the
# background, started directly (no systemd), on ports of their own. Nothing outside that directory
# is read or written, so it runs beside a machine's own Slurm.
#
# Source it, then:
#   slurm_cannot_start        prints why this machine cannot run the cluster (empty: it can)
#   slurm_cluster_start DIR   starts it under DIR and waits until sinfo shows the node idle;
#                             exports SLURM_CONF (the clients' configuration)
#   slurm_cluster_stop        cancels every job, stops the daemons it started, waits for them
#
# The node: 4 CPUs as slots (config_overrides: the machine may have fewer cores) and 4 GPUs that
# are character devices (/dev/null ...): Slurm schedules `--gpus=1` on them as on a GPU node, and
# nothing runs on them. KillWait is 1 s, its minimum: scancel's SIGTERM is then followed by SIGKILL
# about 5 s later (slurmd 22.05 waits that long at least: 4.7 s measured with KillWait 1 and 5,
# 9.7 s with 10). A requeued job may start again 6 s after it ended (cred_expire=5, its minimum).
# proctrack/pgid: a job's processes are those of its process group (no cgroups in a container).

SLURM_CLUSTER_NODE=kscope-node
SLURM_CLUSTER_DIR=

slurm_cannot_start() {
  if [ "$(id -u)" != 0 ]; then
    echo "not root: the one-node cluster runs munged, slurmctld and slurmd as root"
    return
  fi
  local missing=() command
  for command in munged munge slurmctld slurmd sbatch squeue sinfo scontrol scancel srun; do
    command -v "$command" >/dev/null || missing+=("$command")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "no ${missing[*]} on PATH: install Debian's slurm-wlm and munge (apt-get install -y slurm-wlm munge)"
  fi
}

# A TCP port nobody listens on now.
_slurm_free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $1 seconds for the command after it to succeed.
_slurm_wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

_slurm_node_idle() { [ "$(sinfo -h -n "$SLURM_CLUSTER_NODE" -o %t)" = idle ]; }

slurm_cluster_start() {
  local dir=$1
  SLURM_CLUSTER_DIR=$dir
  mkdir -p "$dir"/{state,spool,log}
  chmod 0711 "$dir"  # munged: its socket's directory must be searchable by all, writable by root only
  head -c 1024 /dev/urandom > "$dir/munge.key"
  chmod 0400 "$dir/munge.key"
  munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munged.seed" || return 1
  # The GPUs: four character devices, named in gres.conf beside slurm.conf.
  printf 'Name=gpu File=%s\n' /dev/null /dev/zero /dev/full /dev/urandom > "$dir/gres.conf"
  cat > "$dir/slurm.conf" <<CONF
ClusterName=kscope-test
SlurmctldHost=localhost
SlurmctldPort=$(_slurm_free_port)
SlurmdPort=$(_slurm_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket,cred_expire=5
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=1
JobRequeue=1
MinJobAge=600
GresTypes=gpu
NodeName=$SLURM_CLUSTER_NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=4 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  # -i: start without any earlier state. Both fork into the background and write their pid files.
  slurmctld -i -f "$SLURM_CONF" || return 1
  slurmd -N "$SLURM_CLUSTER_NODE" -f "$SLURM_CONF" || return 1
  if ! _slurm_wait_for 60 _slurm_node_idle; then
    echo "the Slurm node did not become idle within 60 s; sinfo says:" >&2
    sinfo -N -l >&2
    tail -n 20 "$dir"/log/*.log >&2
    return 1
  fi
}

# Stops the daemons named (their pid files' processes, all at once) and waits for them to exit:
# SIGKILL for one still there after 20 s.
_slurm_stop_daemons() {
  local name pids=()
  for name in "$@"; do
    [ -s "$SLURM_CLUSTER_DIR/$name.pid" ] && pids+=("$(cat "$SLURM_CLUSTER_DIR/$name.pid")")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null
  _slurm_wait_for 20 eval "! kill -0 ${pids[*]} 2>/dev/null" || kill -KILL "${pids[@]}" 2>/dev/null
}

slurm_cluster_stop() {
  [ -n "$SLURM_CLUSTER_DIR" ] || return 0
  if [ -s "$SLURM_CLUSTER_DIR/slurmctld.pid" ]; then
    scancel --full --user=root 2>/dev/null
    _slurm_wait_for 20 eval '[ -z "$(squeue -h -t running,completing -o %i)" ]'
  fi
  _slurm_stop_daemons slurmd slurmctld munged
  SLURM_CLUSTER_DIR=
}
