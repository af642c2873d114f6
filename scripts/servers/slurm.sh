#!/usr/bin/env bash
# Starts (or stops) a one-node Slurm cluster (Debian's slurmctld, slurmd, slurm-client and munge)
# on 127.0.0.1 for the tests, without systemd: its own munged, slurmctld and slurmd, everything in
# STATE_DIR/slurm (slurm.conf, the munge key and socket, spool, state, logs, pid files).
#   slurm.sh start STATE_DIR [SLURMCTLD_PORT SLURMD_PORT]   -> prints the path of slurm.conf
#   slurm.sh stop STATE_DIR
# Client commands need `export SLURM_CONF=<that path>`. One partition, "gateway" (the default), one
# node, "localhost", advertising 8 CPUs whatever the machine has (SlurmdParameters=config_overrides),
# so a 4-task array runs all at once on 2 cores; jobs run as the submitting user (root here), in
# the folder sbatch ran in, with its environment. slurmd listens on 127.0.0.1 only; slurmctld on
# every address (CommunicationParameters=NoInAddrAny does not apply to it), MUNGE-authenticated.
# batch_sched_delay=0: a job array starts within a second of sbatch (3 s by default).
# MinJobAge=5 keeps a finished job visible to `scontrol show job` for 5 to 15 s (purges run every
# 10 s) while `sbatch --wait` still polls every 2 s (it polls faster only when MinJobAge/2 > 2);
# DependencyParameters=kill_invalid_depend cancels a job whose afterok dependency failed instead of
# leaving it pending for good. `start` returns once the node is idle (or fails with the logs' tail).
# Logs: STATE_DIR/slurm/log/{munged,slurmctld,slurmd}.log (GATEWAY_SLURM_DEBUG=1: debug2 level).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
action=$1
state=$2
dir="$state/slurm"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Prints the pids of this cluster's Slurm processes: every daemon runs in DIR (its working folder),
# and so do the slurmstepd processes slurmd starts for each job, which outlive slurmd (reparented to
# init; their environment is overwritten by their process title, their working folder is not).
cluster_pids() {
    local cwd=$1 proc
    for proc in /proc/[0-9]*; do
        [[ $(cat "$proc/comm" 2>/dev/null) == slurm* ]] || continue
        [ "$(readlink "$proc/cwd" 2>/dev/null)" = "$cwd" ] && echo "${proc#/proc/}"
    done
    return 0
}

stop_cluster() {
    [ -d "$dir" ] || return 0
    local abs job_ids pids pid
    abs=$(cd "$dir" && pwd)
    # Jobs first, while slurmctld and slurmd still run: each job's slurmstepd ends with it.
    if [ -f "$abs/slurm.conf" ] && [ -f "$abs/slurmctld.pid" ] && any_alive "$(cat "$abs/slurmctld.pid")"; then
        export SLURM_CONF="$abs/slurm.conf"
        job_ids=$(timeout 5 squeue -h -o %i 2>/dev/null | tr '\n' ' ' || true)
        if [ -n "${job_ids// /}" ]; then
            # shellcheck disable=SC2086
            timeout 5 scancel --quiet $job_ids 2>/dev/null || true
            for _ in $(seq 1 50); do
                [ -z "$(timeout 5 squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %i 2>/dev/null)" ] && break
                sleep 0.1
            done
        fi
    fi
    stop_pid_tree "$abs/slurmd.pid" slurmd
    stop_pid_tree "$abs/slurmctld.pid" slurmctld
    stop_pid_tree "$abs/munged.pid" munged
    # Whatever is left of this cluster (a slurmstepd and its job's processes after a crash).
    pids=$(cluster_pids "$abs" | tr '\n' ' ')
    if [ -n "${pids// /}" ]; then
        for pid in $pids; do pids+=" $(descendant_pids "$pid" | tr '\n' ' ')"; done
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        for _ in $(seq 1 60); do
            # shellcheck disable=SC2086
            any_alive $pids || break
            sleep 0.05
        done
    fi
}

# Prints the end of every log (and of a daemon's own output where its log is empty: errors from
# before the log opened), for a start that failed.
show_logs() {
    local log
    for log in "$dir"/log/*.log; do
        [ -s "$log" ] || log=${log%.log}.out
        [ -s "$log" ] || continue
        echo "--- $log" >&2
        tail -n 25 "$log" >&2
    done
}

# For a start that failed: says why, shows the logs, stops what started, exits 1.
fail() {
    echo "Slurm did not start: $1; logs in $dir/log" >&2
    show_logs
    stop_cluster
    exit 1
}

case "$action" in
start)
    ctld_port=${3:-$(free_port)}
    slurmd_port=${4:-$(free_port)}
    for program in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch; do
        [ -x "$program" ] || { echo "$program is missing: run scripts/setup-deps.sh (slurmctld slurmd slurm-client munge)" >&2; exit 1; }
    done
    stop_cluster
    rm -rf "$dir"
    mkdir -p "$dir/munge" "$dir/spool" "$dir/statesave" "$dir/log"
    dir=$(cd "$dir" && pwd)
    # munged refuses a folder of its socket or seed file (or one above) that group or others can
    # write to, unless sticky ("Socket is insecure: group-writable permissions ...").
    chmod 755 "$state" "$dir" "$dir/munge"
    cd "$dir"
    debug=info
    [ "${GATEWAY_SLURM_DEBUG:-0}" = 1 ] && debug=debug2

    mungekey --create --keyfile="$dir/munge/munge.key" --bits=1024
    chmod 600 "$dir/munge/munge.key"
    socket="$dir/munge/munge.socket.2"
    nohup /usr/sbin/munged --foreground --socket="$socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid.own" --seed-file="$dir/munge/munged.seed" > "$dir/log/munged.log" 2>&1 &
    echo $! > "$dir/munged.pid"
    for attempt in $(seq 1 100); do
        munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 && break
        [ "$attempt" -lt 100 ] || fail "munged does not answer on $socket"
        sleep 0.05
    done

    cat > "$dir/slurm.conf" <<CONF
# Written by scripts/servers/slurm.sh: a one-node test cluster on 127.0.0.1.
ClusterName=gateway-test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/statesave
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid.own
SlurmdPidFile=$dir/slurmd.pid.own
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=$debug
SlurmdDebug=$debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=5
DependencyParameters=kill_invalid_depend
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=8 State=UNKNOWN
PartitionName=gateway Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    nohup /usr/sbin/slurmctld -D -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
    echo $! > "$dir/slurmctld.pid"
    # slurmd registers at once when slurmctld already listens (a client that finds no slurmctld
    # retries a second later). Its port is looked for in /proc/net/tcp: a probe connection would
    # log an error.
    listening=":$(printf %04X "$ctld_port")"
    for _ in $(seq 1 200); do
        awk -v port="$listening" '$4 == "0A" && substr($2, length($2) - 4) == port { found = 1 } END { exit !found }' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null && break
        any_alive "$(cat "$dir/slurmctld.pid")" || break
        sleep 0.05
    done
    nohup /usr/sbin/slurmd -D -N localhost -f "$SLURM_CONF" > "$dir/log/slurmd.out" 2>&1 &
    echo $! > "$dir/slurmd.pid"
    # The node registers with slurmctld, which marks it idle (ReturnToService=2).
    deadline=$((SECONDS + 30))
    while :; do
        node_state=$(timeout 5 sinfo -h -n localhost -o %T 2>/dev/null || true)
        [ "$node_state" = idle ] && break
        any_alive "$(cat "$dir/slurmctld.pid")" || fail "slurmctld exited"
        any_alive "$(cat "$dir/slurmd.pid")" || fail "slurmd exited"
        [ "$SECONDS" -lt "$deadline" ] || fail "the node is not idle after 30 s (state: ${node_state:-none})"
        sleep 0.1
    done
    echo "$SLURM_CONF"
    ;;
stop)
    stop_cluster
    ;;
*)
    echo "usage: $0 start STATE_DIR [SLURMCTLD_PORT SLURMD_PORT] | stop STATE_DIR" >&2
    exit 2
    ;;
esac
