# A private sshd on loopback and sshfs mounts of it: sourced by
# fuse_sshfs.sh and bench/sshfs.sh, not run.
#
# ssh_start DIR: start /usr/sbin/sshd -D on 127.0.0.1 on a free port, with
# a host key and a client key made on the fly in DIR, letting in only the
# current user with that key. Sets SSH_DIR, SSH_PORT, SSHD_PID. Returns 1
# (with the reason in SSH_WHY) when it cannot start.
# sshfs_mount REMOTE_DIR MNT [sshfs options...]: mount it in the
# background (sshfs -f) and wait for the mount. Sets SSHFS_PID.
# ssh_stop: unmount every sshfs mount made here, stop sshd.
SSH_DIR=
SSH_PORT=
SSHD_PID=
SSH_WHY=
SSHFS_MNTS=
SSHFS_PIDS=

ssh_start() {
        SSH_DIR=$1
        local sshd=/usr/sbin/sshd
        [ -x "$sshd" ] || { SSH_WHY="$sshd is missing (Debian package openssh-server)"; return 1; }
        command -v sshfs >/dev/null 2>&1 || { SSH_WHY="sshfs is missing (Debian package sshfs)"; return 1; }
        command -v ssh-keygen >/dev/null 2>&1 || { SSH_WHY="ssh-keygen is missing"; return 1; }
        mkdir -p "$SSH_DIR" && chmod 700 "$SSH_DIR" || { SSH_WHY="cannot make $SSH_DIR"; return 1; }
        ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/host_key" </dev/null >/dev/null &&
                ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/key" </dev/null >/dev/null ||
                { SSH_WHY="ssh-keygen failed"; return 1; }
        cp "$SSH_DIR/key.pub" "$SSH_DIR/authorized_keys"
        # sshd run by root needs its privilege separation directory (the
        # service's unit makes it at boot; a container may lack it).
        if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
                mkdir -m 0755 -p /run/sshd || { SSH_WHY="cannot make /run/sshd"; return 1; }
        fi
        local try
        for try in 1 2 3 4 5 6 7 8; do
                SSH_PORT=$((20000 + (RANDOM * 7 + $$) % 30000))
                cat >"$SSH_DIR/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH_DIR/host_key
AuthorizedKeysFile $SSH_DIR/authorized_keys
AllowUsers $(id -un)
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile none
Subsystem sftp internal-sftp
EOF
                : >"$SSH_DIR/sshd.log"
                "$sshd" -D -e -f "$SSH_DIR/sshd_config" </dev/null 2>"$SSH_DIR/sshd.log" &
                SSHD_PID=$!
                local i
                for i in $(seq 50); do
                        grep -qs "Server listening" "$SSH_DIR/sshd.log" && return 0
                        kill -0 "$SSHD_PID" 2>/dev/null || break
                        sleep 0.1
                done
                kill "$SSHD_PID" 2>/dev/null
                wait "$SSHD_PID" 2>/dev/null
                SSHD_PID=
                grep -qs "Bind to port\|Address already in use" "$SSH_DIR/sshd.log" || break
        done
        SSH_WHY="sshd did not start: $(tr '\n' ' ' <"$SSH_DIR/sshd.log")"
        return 1
}

sshfs_mount() {
        local remote=$1 mnt=$2
        shift 2
        mkdir -p "$mnt"
        sshfs -f -p "$SSH_PORT" -o IdentityFile="$SSH_DIR/key" -o StrictHostKeyChecking=no \
                -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR "$@" \
                "$(id -un)@127.0.0.1:$remote" "$mnt" </dev/null 2>>"$SSH_DIR/sshfs.log" &
        SSHFS_PID=$!
        SSHFS_PIDS="$SSHFS_PIDS $SSHFS_PID"
        SSHFS_MNTS="$mnt $SSHFS_MNTS"
        local i
        for i in $(seq 100); do
                grep -qs " $mnt fuse.sshfs" /proc/mounts && return 0
                kill -0 "$SSHFS_PID" 2>/dev/null || break
                sleep 0.05
        done
        echo "sshfs mount of $mnt failed:" >&2
        cat "$SSH_DIR/sshfs.log" >&2
        return 1
}

# The processes sshd started for its sessions (children of SSHD_PID, and
# theirs) (ps).
sshd_sessions() {
        ps -e -o pid=,ppid= | awk -v root="$SSHD_PID" '
        { parent[$1] = $2 }
        END {
                do {
                        more = 0
                        for (p in parent)
                                if (!(p in in_tree) && (parent[p] == root || parent[p] in in_tree)) {
                                        in_tree[p] = 1; more = 1
                                }
                } while (more)
                for (p in in_tree) print p
        }'
}

ssh_stop() {
        local m p
        for m in $SSHFS_MNTS; do
                if grep -qs " $m fuse" /proc/mounts; then
                        fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
                fi
        done
        for p in $SSHFS_PIDS; do
                kill "$p" 2>/dev/null
        done
        if [ -n "$SSHD_PID" ]; then
                for p in $(sshd_sessions); do
                        kill -CONT "$p" 2>/dev/null
                        kill "$p" 2>/dev/null
                done
                kill "$SSHD_PID" 2>/dev/null
                wait "$SSHD_PID" 2>/dev/null
        fi
        SSHFS_MNTS= SSHFS_PIDS= SSHD_PID=
}
