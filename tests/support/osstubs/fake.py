#!/usr/bin/env python3
"""Package managers and system tools for the boot-script tests of other operating systems (tests/unit/
tests/tooling/test_node_boot.py), in front of tests/support/stubs/: dnf, rpm, zypper, transactional-update, fips-mode-setup,
ssh-keygen, ip, rke2, SUSEConnect, modprobe, sysctl, usermod and the parts of systemctl that answer questions. Each records its call in
$STUB_LOG.os (one JSON line: the command and its arguments) and keeps what it changed in $STUB_STATE
(a JSON file shared with tests/support/stubs/curl.py): `installed` packages, `units` that exist, `fips_pending`
(fips-mode-setup --enable ran; the test's "reboot" turns it on), `snapshot_pending` (transactional-update
ran: its packages exist after the reboot only), `default_route`, `rke2_version`.

Behaviour as the real tools, where the tests depend on it:
- dnf install of local files fails when a file is missing or when an rpm's dependency is neither
  installed nor among the files and the repositories are disabled (--disablerepo='*');
- zypper refuses a signed local rpm whose key was not imported (`rpm --import`), as a non-interactive
  zypper does for an unknown key;
- transactional-update runs its command in a new snapshot: what it installs is pending until a reboot;
  with `read_only` (SLE Micro) rpm --import and zypper refuse to run outside it;
- fips-mode-setup --enable takes effect at the next boot (/proc/sys/crypto/fips_enabled stays 0 until then).
"""
# The stand-ins run it with python3 -S (only the standard library: none of site's start-up work).
import json
import os
import re
import sys

state_path, log_path = os.environ["STUB_STATE"], os.environ["STUB_LOG"] + ".os"
with open(state_path) as f:
    state = json.load(f)
command, args = sys.argv[1], sys.argv[2:]
with open(log_path, "a") as f:
    f.write(json.dumps([command, *args]) + "\n")


def save():
    with open(state_path, "w") as f:
        json.dump(state, f)


def package_of(path):
    """rke2-selinux-0.23-1.el9.noarch.rpm -> rke2-selinux (name-version-release.arch.rpm); a file named
    without version (amazon-ssm-agent.rpm, as AWS publishes it) is the package of that name."""
    m = re.match(r"^(.*?)-[0-9][^-]*-[^-]+\.rpm$", os.path.basename(path))
    return m.group(1) if m else os.path.basename(path)[:-len(".rpm")]


def install(files, name):
    # Inside a transaction /var is not the node's (openSUSE/transactional-update lib/Transaction.cpp): its
    # files are not there; /opt is bind-mounted (tukit.conf BINDDIRS).
    root = os.environ.get("RKE_AWS_ROOT", "")
    hidden = [f for f in files if state.get("in_snapshot") and f.startswith(root + "/var/")]
    if hidden:
        sys.exit(f"{name}: no such file (not in the new snapshot): {hidden}")
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        sys.exit(f"{name}: no such file: {missing}")
    # What the packages require that is not installed nor installed with them (tests' `requires`).
    names = {package_of(f) for f in files}
    have = set(state.get("installed", [])) | names
    for n in names:
        for need in state.get("requires", {}).get(n, []):
            if need not in have:
                sys.exit(f"{name}: nothing provides {need} needed by {n}")
    target = "pending" if state.get("in_snapshot") else "installed"
    state.setdefault(target, [])
    state[target] += sorted(names - set(state[target]))
    save()


if command == "dnf":
    if args[:2] != ["install", "-y"]:
        sys.exit(f"dnf: unexpected {args}")
    rest = args[2:]
    offline = "--disablerepo=*" in rest
    files = [a for a in rest if not a.startswith("-")]
    local = [a for a in files if a.endswith(".rpm")]
    if local:
        install(local, "dnf")
    for package in (a for a in files if not a.endswith(".rpm")):
        if offline or not state.get("repos_reachable", True):
            sys.exit(f"dnf: no package {package} available")
        state.setdefault("installed", []).append(package)
        if package == "crypto-policies-scripts":
            state["fips_tool"] = True
        save()
elif command == "rpm":
    if args[:1] == ["--import"] and state.get("read_only") and not state.get("in_snapshot"):
        sys.exit("rpm: error: cannot open Packages database: Read-only file system")
    if args[:1] == ["--import"]:
        state.setdefault("keys", []).append(os.path.basename(args[1]))
        save()
    elif args[:2] == ["-q", "--quiet"]:
        sys.exit(0 if args[2] in state.get("installed", []) else 1)
    else:
        sys.exit(f"rpm: unexpected {args}")
elif command == "zypper":
    if state.get("read_only") and not state.get("in_snapshot"):
        sys.exit("zypper: This is a transactional-server, please use transactional-update to update or modify the system.")
    rest = [a for a in args if a not in ("--non-interactive", "--gpg-auto-import-keys", "--check")]
    if rest[:1] == ["addrepo"]:
        state.setdefault("repos", []).append(rest[1])
        save()
    elif rest[:1] == ["install"]:
        files = [a for a in rest[1:] if a.endswith(".rpm")]
        if files and not state.get("keys") and any(package_of(f) in state.get("signed", []) for f in files):
            sys.exit("zypper: Signature verification failed: the key is not trusted (import it with rpm --import)")
        if files:
            install(files, "zypper")
        for package in (a for a in rest[1:] if not a.endswith(".rpm")):
            if not state.get("repos"):
                sys.exit(f"zypper: no package {package}: no repository")
            target = "pending" if state.get("in_snapshot") else "installed"
            state.setdefault(target, []).append(package)
            save()
    else:
        sys.exit(f"zypper: unexpected {args}")
elif command == "transactional-update":
    if args[:2] != ["--no-selfupdate", "-d"] or "run" not in args:
        sys.exit(f"transactional-update: unexpected {args}")
    if "--continue" not in args[:args.index("run")]:
        # a new snapshot from the running system: what an earlier call put in its snapshot is gone
        state["pending"] = []
    state["in_snapshot"] = True
    state["snapshot_pending"] = True
    save()
    import subprocess  # here: only transactional-update runs a command (~15 ms of import for every other stand-in call)

    proc = subprocess.run(args[args.index("run") + 1:])
    with open(state_path) as f:
        state = json.load(f)
    state["in_snapshot"] = False
    save()
    sys.exit(proc.returncode)
elif command == "fips-mode-setup":
    if not state.get("fips_tool", True):
        sys.exit(127)
    if args == ["--enable"]:
        state["fips_pending"] = True
        save()
    elif args == ["--check"]:
        print("FIPS mode is disabled.")
        sys.exit(2)
    else:
        sys.exit(f"fips-mode-setup: unexpected {args}")
elif command == "ssh-keygen":
    if args != ["-A"]:
        sys.exit(f"ssh-keygen: unexpected {args}")
    state["ssh_keys_made"] = state.get("ssh_keys_made", 0) + 1
    save()
elif command == "ip":
    if args == ["route", "show", "default"]:
        if state.get("default_route"):
            print(state["default_route"])
    else:
        sys.exit(f"ip: unexpected {args}")
elif command == "rke2":
    if args == ["--version"] and state.get("rke2_version"):
        print(f"rke2 version {state['rke2_version']} (0123456789abcdef)")
        print("go version go1.24 X:boringcrypto")
    else:
        sys.exit(1)
elif command == "systemctl":
    # Questions about units, answered from `units`; everything else goes to tests/support/stubs/systemctl.
    # an installed package's unit exists (amazon-ssm-agent -> amazon-ssm-agent.service)
    units = state.get("units", []) + [f"{p}.service" for p in state.get("installed", [])]
    if args[:1] == ["cat"]:
        sys.exit(0 if args[1] in units else 1)
    if args[:1] == ["disable"] and args[1:2] == ["--now"]:
        state.setdefault("stopped", []).append(args[2])
        save()
    if args == ["reboot"]:
        state["rebooted"] = state.get("rebooted", 0) + 1
        save()
    if args[:1] == ["enable"] and "--now" in args:
        state.setdefault("started", []).append(args[-1])
        save()
    os.execv(os.environ["STUB_SYSTEMCTL"], ["systemctl", *args])
elif command in ("modprobe", "sysctl", "usermod"):
    # An RKE1 node's kernel settings and its SSH user in the docker group (rke.sh): recorded; usermod fails as
    # the real one does when the group does not exist (no Docker installed).
    if command == "usermod":
        if args[:1] != ["-aG"] or len(args) != 3:
            sys.exit(f"usermod: unexpected {args}")
        if not ({"docker", "docker-ce"} & set(state.get("installed", []))):
            sys.exit(f"usermod: group '{args[1]}' does not exist")
        state.setdefault("groups", {}).setdefault(args[1], []).append(args[2])
        save()
elif command == "SUSEConnect":
    # `SUSEConnect -p <module>/<version>/<arch>` activates a module: its repositories appear (rke1-docs
    # docs/os/os.md, SLES: the Containers module carries `docker`); `products` lists what may be activated.
    if args[:1] != ["-p"] or len(args) != 2:
        sys.exit(f"SUSEConnect: unexpected {args}")
    if args[1] not in state.get("products", []):
        sys.exit(f"SUSEConnect: Error: product {args[1]} not found or not available")
    state.setdefault("repos", []).append(args[1])
    save()
else:
    sys.exit(f"fake.py: unknown command {command}")
