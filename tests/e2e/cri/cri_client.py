#!/usr/bin/python3
"""A small CRI client: what kubelet asks of containerd about pod sandboxes.

Usage: cri_client.py <socket> <command> [args]
  wait                      until the runtime and its network report ready
  version                   the runtime's name and version
  run <name> [--port P:C:H[:IP]]... [--annotation K=V]...
                            RunPodSandbox; prints the sandbox id (P is tcp, udp
                            or sctp; C the pod's port, H the host's)
  container <id> <image> <command...>
                            CreateContainer and StartContainer in pod <id>;
                            prints the container id
  status <id> <field>       one field of PodSandboxStatus (verbose):
                            state, ips (all, the primary first), netns, pid
  list                      the ids of every sandbox, one a line
  stop <id> | rm <id>       StopPodSandbox | RemovePodSandbox

The messages come from cri_subset.proto, compiled by protoc into the
directory named by CRI_PB_DIR. Pods go into the cgroup parent named by
CRI_CGROUP_PARENT (cgroupfs style), as kubelet's pods go into kubepods.
Errors print the gRPC status and exit 1.
"""
import json
import os
import sys
import time

import grpc

sys.path.insert(0, os.environ["CRI_PB_DIR"])
import cri_subset_pb2 as cri  # noqa: E402

SERVICE = "/runtime.v1.RuntimeService/"
TIMEOUT = 60  # seconds for one call: a CNI ADD of ours takes milliseconds


class Runtime:
    def __init__(self, socket):
        self.channel = grpc.insecure_channel("unix://" + socket)

    def call(self, method, request, reply_type):
        rpc = self.channel.unary_unary(
            SERVICE + method,
            request_serializer=type(request).SerializeToString,
            response_deserializer=reply_type.FromString)
        return rpc(request, timeout=TIMEOUT)


def parse_port(text):
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise SystemExit(f"bad --port {text!r} (proto:pod-port:host-port[:host-ip])")
    mapping = cri.PortMapping(protocol=cri.Protocol.Value(parts[0].upper()),
                              container_port=int(parts[1]), host_port=int(parts[2]))
    if len(parts) == 4:
        mapping.host_ip = parts[3]
    return mapping


def kubelet_namespaces():
    # As kubelet asks for a pod: network and IPC shared, PID per container.
    return cri.NamespaceOption(network=cri.POD, pid=cri.CONTAINER, ipc=cri.POD)


def sandbox_config(name, ports=(), annotations=None):
    return cri.PodSandboxConfig(
        metadata=cri.PodSandboxMetadata(name=name, uid=f"uid-{name}", namespace="e2e"),
        hostname=name,
        port_mappings=ports,
        labels={"app": name},
        annotations=annotations or {},
        linux=cri.LinuxPodSandboxConfig(
            cgroup_parent=os.environ.get("CRI_CGROUP_PARENT", ""),
            security_context=cri.LinuxSandboxSecurityContext(
                namespace_options=kubelet_namespaces())))


def run(rt, args):
    name, ports, annotations = args[0], [], {}
    rest = args[1:]
    while rest:
        if len(rest) < 2:
            raise SystemExit(f"{rest[0]!r} needs a value")
        if rest[0] == "--port":
            ports.append(parse_port(rest[1]))
        elif rest[0] == "--annotation":
            key, _, value = rest[1].partition("=")
            annotations[key] = value
        else:
            raise SystemExit(f"unknown argument {rest[0]!r}")
        rest = rest[2:]
    reply = rt.call("RunPodSandbox",
                    cri.RunPodSandboxRequest(config=sandbox_config(name, ports, annotations)),
                    cri.RunPodSandboxResponse)
    print(reply.pod_sandbox_id)


def container(rt, sandbox_id, image, command):
    # kubelet hands the sandbox's config again; ours is rebuilt from its name.
    pod = rt.call("PodSandboxStatus", cri.PodSandboxStatusRequest(pod_sandbox_id=sandbox_id),
                  cri.PodSandboxStatusResponse).status
    config = cri.ContainerConfig(
        metadata=cri.ContainerMetadata(name=os.path.basename(command[0])),
        image=cri.ImageSpec(image=image),
        command=command,
        linux=cri.LinuxContainerConfig(
            security_context=cri.LinuxContainerSecurityContext(
                namespace_options=kubelet_namespaces())))
    created = rt.call("CreateContainer",
                      cri.CreateContainerRequest(pod_sandbox_id=sandbox_id, config=config,
                                                 sandbox_config=sandbox_config(pod.metadata.name)),
                      cri.CreateContainerResponse)
    rt.call("StartContainer", cri.StartContainerRequest(container_id=created.container_id),
            cri.StartContainerResponse)
    print(created.container_id)


def status(rt, sandbox_id, field):
    reply = rt.call("PodSandboxStatus",
                    cri.PodSandboxStatusRequest(pod_sandbox_id=sandbox_id, verbose=True),
                    cri.PodSandboxStatusResponse)
    st = reply.status
    if field == "state":
        print(cri.PodSandboxState.Name(st.state))
    elif field == "ips":
        ips = [st.network.ip] if st.network.ip else []
        print(" ".join(ips + [x.ip for x in st.network.additional_ips]))
    elif field in ("netns", "pid"):
        # containerd's own record of the sandbox, as JSON.
        info = json.loads(reply.info.get("info", "{}"))
        if field == "pid":
            print(info.get("pid", 0))
        else:
            spec = info.get("runtimeSpec", {})
            paths = [ns.get("path", "") for ns in spec.get("linux", {}).get("namespaces", [])
                     if ns.get("type") == "network"]
            print(paths[0] if paths else "")
    else:
        raise SystemExit(f"unknown status field {field!r}")


def wait_ready(rt):
    deadline = time.monotonic() + 30
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            reply = rt.call("Status", cri.StatusRequest(), cri.StatusResponse)
            conditions = {c.type: c for c in reply.status.conditions}
            if all(c.status for c in conditions.values()) and conditions:
                return
            last = "; ".join(f"{c.type}={c.status} {c.reason} {c.message}"
                             for c in conditions.values())
        except grpc.RpcError as e:
            last = f"{e.code().name}: {e.details()}"
        time.sleep(0.2)
    raise SystemExit(f"the runtime is not ready after 30 s: {last}")


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    rt, command, args = Runtime(argv[1]), argv[2], argv[3:]
    if command == "wait":
        wait_ready(rt)
    elif command == "version":
        v = rt.call("Version", cri.VersionRequest(version="v1"), cri.VersionResponse)
        print(v.runtime_name, v.runtime_version, v.runtime_api_version)
    elif command == "run":
        run(rt, args)
    elif command == "container":
        container(rt, args[0], args[1], args[2:])
    elif command == "status":
        status(rt, args[0], args[1])
    elif command == "list":
        reply = rt.call("ListPodSandbox", cri.ListPodSandboxRequest(),
                        cri.ListPodSandboxResponse)
        for item in reply.items:
            print(item.id)
    elif command == "stop":
        rt.call("StopPodSandbox", cri.StopPodSandboxRequest(pod_sandbox_id=args[0]),
                cri.StopPodSandboxResponse)
    elif command == "rm":
        rt.call("RemovePodSandbox", cri.RemovePodSandboxRequest(pod_sandbox_id=args[0]),
                cri.RemovePodSandboxResponse)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except grpc.RpcError as e:
        print(f"cri_client: {sys.argv[2]}: {e.code().name}: {e.details()}", file=sys.stderr)
        sys.exit(1)
