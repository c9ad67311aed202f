#!/usr/bin/env bash
# Makes the fixtures of `mpg import slurm` (tests/fixtures/adapters/slurm/) from a real Slurm.
#
#     sudo bash tests/support/adapters/make_slurm_fixtures.sh        # about five minutes
#     sudo bash tests/support/adapters/make_slurm_fixtures.sh het    # heterogeneous jobs, two minutes
#
# It installs Debian's Slurm (slurmctld, slurmd, slurmdbd with MariaDB, munge) on the machine it
# runs on, as root and without systemd (tested on Debian 12, slurm-wlm 22.05.8), configures one
# node `gpu1` whose GPUs are gres backed by device files made with mknod (4 a100, 4 h100), runs a
# scripted workload of seconds-long jobs (an array, a requeue, a preemption, a node drained and
# one failing mid-job, cancellations, a time limit, a hold, a dependency, a CPU-only job, jobs
# still running and pending at the end), waits for the accounting, and writes
# `sacct --parsable2` output: the command of docs/adapters/slurm.md at the end
# (sacct.txt), the same mid-way (sacct-midway.txt), and without --allocations (sacct-steps.txt:
# the job steps too). Then it cancels its jobs and stops everything it started. The tests read the committed outputs and need no Slurm.
#
# With `het`, the cluster has two nodes instead (Slurm places a heterogeneous job's components on
# different nodes): `gpu1` and `gpu2`, 4 h100 each, one partition, two slurmd on this machine
# (the second on its own port); the workload is heterogeneous jobs, and the outputs go to het/
# (sacct.txt, and sacct-steps.txt with the job steps).
#
# Everything Slurm writes lives under $WORK (default /tmp/mpg-slurm), so nothing in /etc/slurm
# is touched: the daemons and commands find their configuration through SLURM_CONF.

set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(realpath -m "${OUT:-$HERE/../../fixtures/adapters/slurm}")"
WORK="${WORK:-/tmp/mpg-slurm}"
MODE="${1:-}" # empty: the main workload; het: heterogeneous jobs on two nodes
NODES=gpu1
if [ "$MODE" = het ]; then NODES="gpu1 gpu2"; fi
DB_PASSWORD="mpg-fixtures"
export SLURM_CONF="$WORK/etc/slurm.conf"
# sacct prints local times without a zone: UTC here, as the documented command asks.
export TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

install_packages() {
    if ! command -v slurmctld >/dev/null || ! command -v mariadbd >/dev/null; then
        log "installing slurm-wlm, slurmdbd, mariadb-server, munge"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq slurm-wlm slurmdbd mariadb-server munge >/dev/null
    fi
}

write_config() {
    rm -rf "$WORK"
    mkdir -p "$WORK"/{etc,state,spool/gpu1,spool/gpu2,log,jobs}
    # Character devices for the gres: Slurm only checks that the File= paths exist. Those made
    # here are listed, and removed at the end.
    for n in 0 1 2 3 4 5 6 7; do
        if [ ! -e "/dev/nvidia$n" ]; then
            mknod "/dev/nvidia$n" c 195 "$n"
            echo "/dev/nvidia$n" >>"$WORK/devices-made"
        fi
    done
    cat >"$WORK/etc/slurm.conf" <<EOF
ClusterName=mpgtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# Requeued jobs become eligible again after the credential's lifetime: 10 s, not 120.
AuthInfo=cred_expire=10
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool/%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd-%n.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu,gres/gpu:a100,gres/gpu:h100
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
GresTypes=gpu
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
KillWait=2
InactiveLimit=0
OverTimeLimit=0
MinJobAge=300
ReturnToService=2
EOF
    if [ "$MODE" = het ]; then
        cat >>"$WORK/etc/slurm.conf" <<EOF
NodeName=gpu1 NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 Gres=gpu:h100:4 State=UNKNOWN
NodeName=gpu2 NodeHostname=gpu2 NodeAddr=127.0.0.1 Port=6820 CPUs=2 RealMemory=4000 Gres=gpu:h100:4 State=UNKNOWN
PartitionName=gpu Nodes=gpu1,gpu2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
        cat >"$WORK/etc/gres.conf" <<EOF
NodeName=gpu1 Name=gpu Type=h100 File=/dev/nvidia[0-3]
NodeName=gpu2 Name=gpu Type=h100 File=/dev/nvidia[4-7]
EOF
    else
        cat >>"$WORK/etc/slurm.conf" <<EOF
NodeName=gpu1 NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 Gres=gpu:a100:4,gpu:h100:4 State=UNKNOWN
PartitionName=low Nodes=gpu1 Default=YES MaxTime=INFINITE State=UP PriorityTier=1 OverSubscribe=FORCE:8 PreemptMode=REQUEUE
PartitionName=high Nodes=gpu1 MaxTime=INFINITE State=UP PriorityTier=2 OverSubscribe=FORCE:8
EOF
        cat >"$WORK/etc/gres.conf" <<EOF
NodeName=gpu1 Name=gpu Type=a100 File=/dev/nvidia[0-3]
NodeName=gpu1 Name=gpu Type=h100 File=/dev/nvidia[4-7]
EOF
    fi
    cat >"$WORK/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASSWORD
StorageLoc=mpg_slurm_acct_db
PidFile=$WORK/slurmdbd.pid
LogFile=$WORK/log/slurmdbd.log
EOF
    chmod 600 "$WORK/etc/slurmdbd.conf"
}

wait_until() { # wait_until SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds
    local limit=$1 what=$2
    shift 2
    for _ in $(seq $((limit * 2))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    log "gave up waiting for: $what"
    return 1
}

start_daemons() {
    log "starting munged, MariaDB, slurmdbd, slurmctld, slurmd"
    mkdir -p /run/munge && chown munge:munge /run/munge
    pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
    if ! pgrep -x mariadbd >/dev/null; then
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
        (mysqld_safe --user=mysql >/dev/null 2>&1 &)
    fi
    wait_until 60 "MariaDB" mysqladmin ping
    mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
              DROP DATABASE IF EXISTS mpg_slurm_acct_db;
              CREATE DATABASE mpg_slurm_acct_db;
              GRANT ALL ON mpg_slurm_acct_db.* TO 'slurm'@'localhost';"
    slurmdbd
    wait_until 60 "slurmdbd" sacctmgr -n list cluster
    sacctmgr -i add cluster mpgtest >/dev/null
    slurmctld -i
    local node
    for node in $NODES; do
        slurmd -N "$node"
        wait_until 60 "node $node idle" bash -c "sinfo -h -n $node -o %T | grep -qx idle"
    done
}

stop_daemons() {
    log "cancelling the jobs left, stopping the daemons"
    if [ -s "$WORK/slurmctld.pid" ]; then
        scancel --user=root 2>/dev/null || true
        wait_until 60 "no job left" bash -c '[ -z "$(squeue -h -o %i)" ]' || true
        wait_until 30 "the job steps to exit" bash -c '! pgrep -x slurmstepd' || true
    fi
    for pidfile in "$WORK"/slurmd-*.pid "$WORK/slurmctld.pid" "$WORK/slurmdbd.pid"; do
        if [ -s "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
    done
    sleep 2
    mysqladmin shutdown 2>/dev/null || true
    if [ -s /run/munge/munged.pid ]; then kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true; fi
    if [ -s "$WORK/devices-made" ]; then xargs rm -f <"$WORK/devices-made"; fi
}

# --- the workload -------------------------------------------------------------------------------

submit() { # submit NAME SBATCH-OPTIONS... : the job id
    local name=$1
    shift
    sbatch --parsable -J "$name" -o "$WORK/jobs/%x-%j.out" "$@"
}

state_of() { squeue -h -j "$1" -o %T 2>/dev/null | head -n 1; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }
wait_state() { wait_until 180 "job $1 $2" is_state "$1" "$2"; }
gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
wait_gone() { wait_until 240 "job $1 to end" gone "$1"; }
pending_array_recorded() { sacct_day --noheader | grep -q "^$1_\\["; }

run_workload() {
    cd "$WORK/jobs" # the jobs' working directory
    log "workload 1: an array, a preemption, a time limit, a failure"
    local ok array preempted urgent timeout failed
    ok=$(submit ok-a100 --gres=gpu:a100:1 --wrap "sleep 8")
    # Four at a time (the rest wait on the array's own limit), and only three a100 are free.
    array=$(submit array --gres=gpu:a100:1 --array=0-7%4 --wrap "sleep 4")
    preempted=$(submit preempted --requeue --gres=gpu:h100:2 --wrap "sleep 15")
    timeout=$(submit timeout -p high --time=1 --gres=gpu:h100:1 --wrap "sleep 600")
    failed=$(submit failed --gres=gpu:h100:1 --wrap "sleep 3; exit 3")
    wait_state "$preempted" RUNNING
    sleep 4
    # High tier, two h100 while only one is free: the low-tier `preempted` is requeued.
    urgent=$(submit urgent -p high --gres=gpu:h100:2 --wrap "sleep 5")
    wait_state "$urgent" RUNNING
    sleep 3
    # Mid-way, as a daily run would read it while jobs run and wait (array tasks pending).
    sacct_day >"$OUT/sacct-midway.txt"
    wait_gone "$urgent"

    log "workload 2: an admin requeue, cancellations, a hold, a dependency, other requests"
    local requeued cancelled blocker waiting held dependent
    requeued=$(submit requeued --requeue --gres=gpu:a100:1 --wrap "sleep 12")
    cancelled=$(submit cancelled --gres=gpu:a100:1 --wrap "sleep 600")
    wait_state "$requeued" RUNNING
    wait_state "$cancelled" RUNNING
    # Pending for GPUs (four a100 while two are taken), then cancelled before it ever ran.
    waiting=$(submit cancelled-pending --gres=gpu:a100:4 --wrap "sleep 5")
    sleep 3
    scancel "$waiting"
    scontrol requeue "$requeued"
    scancel "$cancelled"
    held=$(submit held --hold --gres=gpu:a100:1 --wrap "sleep 3")
    dependent=$(submit dependent --dependency=afterok:"$held" --gres=gpu:a100:1 --wrap "sleep 3")
    submit cpu-only --wrap "sleep 2" >/dev/null
    submit untyped --gres=gpu:2 --wrap "sleep 3" >/dev/null
    submit gpus-flag --gpus=h100:1 --wrap "sleep 3" >/dev/null
    submit two-types --gres=gpu:a100:1,gpu:h100:1 --wrap "sleep 3" >/dev/null
    submit steps --gres=gpu:a100:1 --wrap "srun sleep 2; srun sleep 1" >/dev/null
    sleep 5
    scontrol release "$held"
    wait_gone "$dependent"
    wait_gone "$requeued"
    wait_gone "$timeout" # before the node fails under it

    log "workload 3: the node drained mid-job, then failing under two jobs"
    local drained queued lost survivor
    drained=$(submit drained --gres=gpu:a100:2 --wrap "sleep 10")
    wait_state "$drained" RUNNING
    sleep 2
    scontrol update nodename=gpu1 state=drain reason=maintenance
    queued=$(submit queued-behind-drain --gres=gpu:a100:1 --wrap "sleep 3")
    wait_gone "$drained"
    scontrol update nodename=gpu1 state=resume
    wait_gone "$queued"
    survivor=$(submit node-fail-requeued --requeue --gres=gpu:h100:2 --wrap "sleep 15")
    lost=$(submit node-fail --no-requeue --gres=gpu:a100:1 --wrap "sleep 600")
    wait_state "$survivor" RUNNING
    wait_state "$lost" RUNNING
    sleep 3
    # Down kills the jobs on the node (NODE_FAIL); ReturnToService=2 takes it back as soon as
    # slurmd answers, so it needs no resume.
    scontrol update nodename=gpu1 state=down reason=hardware
    wait_gone "$survivor"
    wait_gone "$failed"
    wait_gone "$ok"
    wait_until 120 "the array" bash -c "[ -z \"\$(squeue -h -r -j $array -o %i)\" ]"

    log "workload 4: jobs still running and pending when the accounting is read"
    local open_running
    open_running=$(submit open-running --gres=gpu:a100:4 --wrap "sleep 600")
    wait_state "$open_running" RUNNING
    submit open-pending --gres=gpu:a100:1 --wrap "sleep 5" >/dev/null
    # A heterogeneous job (a CPU component, a GPU one): Slurm 22.05 does not place two
    # components on one node, so on this one-node cluster it stays pending.
    cat >"$WORK/jobs/het.sh" <<'EOF'
#!/bin/bash
#SBATCH -J het -n 1
#SBATCH hetjob
#SBATCH -n 1 --gres=gpu:h100:1
sleep 4
EOF
    sbatch --parsable -o "$WORK/jobs/het-%j.out" "$WORK/jobs/het.sh" >/dev/null
    local open_array
    open_array=$(submit open-array --gres=gpu:a100:1 --array=1-3 --wrap "sleep 5")
    # slurmdbd hears of jobs some seconds late: wait until the pending array is in the database.
    wait_until 60 "the open array in the accounting" pending_array_recorded "$open_array"
}

het_script() { # het_script NAME BODY COMPONENT-OPTIONS...: a batch script, one component each
    local name=$1 body=$2 file="$WORK/jobs/$1.sh"
    shift 2
    printf '#!/bin/bash\n#SBATCH -J %s %s\n' "$name" "$1" >"$file"
    shift
    for options in "$@"; do printf '#SBATCH hetjob\n#SBATCH %s\n' "$options" >>"$file"; done
    printf '%s\n' "$body" >>"$file"
    echo "$file"
}

submit_het() { # submit_het NAME BODY COMPONENT-OPTIONS...: the heterogeneous job's id
    sbatch --parsable -o "$WORK/jobs/%x-%j.out" "$(het_script "$@")"
}

run_het_workload() {
    cd "$WORK/jobs"
    # Accounts to charge: the Account field is who pays (a component may name its own).
    sacctmgr -i add account physics,vision >/dev/null
    sacctmgr -i add user root account=physics,vision >/dev/null
    local h1="-n 1 --gres=gpu:h100:1" h2="-n 1 --gres=gpu:h100:2" ok cut queued blocker requeued
    log "heterogeneous jobs: one completes, one loses a component, one waits for GPUs"
    ok=$(submit_het het-ok "srun --het-group=0,1 sleep 2; sleep 2" "-A physics $h1" "-A physics $h2")
    wait_gone "$ok"
    # The GPU component is cancelled 3 s in; the leader runs its script on to the end.
    cut=$(submit_het het-cut "sleep 12" "-A vision $h1" "-A physics $h2")
    wait_state "$cut" RUNNING
    sleep 3
    scancel "$cut+1"
    # gpu1's GPUs all taken for 8 s: the next one waits for them.
    blocker=$(submit blocker -A physics -w gpu1 --gres=gpu:h100:4 --wrap "sleep 8")
    wait_state "$blocker" RUNNING
    queued=$(submit_het het-queued "sleep 3" "-A physics $h1" "-A physics $h1")
    wait_gone "$queued"
    wait_gone "$cut"

    log "heterogeneous jobs: requeued, failing, with a CPU-only component"
    requeued=$(submit_het het-requeued "sleep 6" "--requeue -A physics $h1" "-A physics $h2")
    wait_state "$requeued" RUNNING
    sleep 3
    scontrol requeue "$requeued"
    local failed cpu
    failed=$(submit_het het-failed "sleep 3; exit 3" "-A vision $h1" "-A vision $h1")
    # CPU data preparation (charged to vision) beside GPU training (charged to physics).
    cpu=$(submit_het het-cpu "sleep 4" "-A vision -n 1" "-A physics $h2")
    wait_gone "$failed"
    wait_gone "$cpu"
    wait_gone "$requeued"

    log "heterogeneous jobs still running and pending when the accounting is read"
    local running
    running=$(submit_het het-running "sleep 600" "-A physics $h1" "-A physics $h1")
    wait_state "$running" RUNNING
    # Four h100 on each node while het-running holds one of each: it waits.
    submit_het het-pending "sleep 3" "-A physics -n 1 --gres=gpu:h100:4" \
        "-A physics -n 1 --gres=gpu:h100:4" >/dev/null
    sleep 3
}

# The command docs/adapters/slurm.md gives, over the day of the workload. Account was
# added after the main fixtures were made (their files have none: no team).
FORMAT=JobID,JobIDRaw,Partition,Account,User,Submit,Eligible,Start,End,State,ReqTRES,AllocTRES,NodeList
sacct_day() {
    sacct --allusers --duplicates --allocations --parsable2 --format="$FORMAT" \
        --starttime="$(date -u +%Y-%m-%d)T00:00:00" --endtime=now "$@"
}

main() {
    install_packages
    write_config
    trap stop_daemons EXIT
    start_daemons
    local begin
    begin=$(date -u +%s)
    if [ "$MODE" = het ]; then OUT="$OUT/het"; fi # another cluster: its job ids are its own
    mkdir -p "$OUT"
    if [ "$MODE" = het ]; then run_het_workload; else run_workload; fi
    log "reading the accounting"
    sacct_day >"$OUT/sacct.txt"
    sacct --allusers --duplicates --parsable2 --format="$FORMAT" \
        --starttime="$(date -u +%Y-%m-%d)T00:00:00" --endtime=now >"$OUT/sacct-steps.txt"
    sacct --version >"$OUT/slurm-version.txt"
    log "done in $(($(date -u +%s) - begin)) s: $(wc -l <"$OUT/sacct.txt") lines in sacct.txt"
}

# Sourced (to drive a daemon by hand), it only defines the functions.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
