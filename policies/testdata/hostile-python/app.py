"""A Python policy that misbehaves on request, to prove the sandbox contains
componentize-py components as it contains Rust ones.

The config is a JSON object: {"do": "<behaviour>", "port": <loopback port>}.
Every behaviour that reaches outside reports what happened as the decision's
`other` error, so a test can tell a denial from a success.
"""

import json
import encodings.idna  # noqa: F401 (socket encodes host names with it)
import socket

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types as t

BEHAVIOURS = ["ok", "connect", "resolve", "loop", "oom", "print-flood"]


def settings(config: str) -> dict:
    raw = json.loads(config)
    if raw.get("do") not in BEHAVIOURS:
        raise Err(f"do must be one of {BEHAVIOURS}, got {raw.get('do')!r}")
    return raw


def attempt(action) -> str:
    try:
        return f"succeeded: {action()!r}"
    except Exception as e:  # the denial is the expected outcome
        return f"denied: {type(e).__name__}: {e}"


def connect(address: str, port: int) -> socket.socket:
    """A TCP connection by address, with no name lookup on the way."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(1)
    sock.connect((address, port))
    return sock


class Policy(exports.Policy):
    def describe(self) -> t.PolicyInfo:
        return t.PolicyInfo(name="hostile-python", version="0.1.0")

    def validate_config(self, config: str) -> None:
        settings(config)

    def decide(self, config: str, input: t.DecisionInput) -> t.Decision:
        raw = settings(config)
        behaviour = raw["do"]
        if behaviour == "connect":
            port = raw["port"]
            raise Err(t.DecisionError_Other(
                "connect " + attempt(lambda: connect("127.0.0.1", port))))
        if behaviour == "resolve":
            raise Err(t.DecisionError_Other(
                "resolve " + attempt(lambda: socket.getaddrinfo("localhost", 80))))
        if behaviour == "loop":
            n = 0
            while True:
                n += 1
        if behaviour == "oom":
            hoard = []
            while True:
                hoard.append(bytearray(1 << 20))
        if behaviour == "print-flood":
            while True:
                print("flood " * 100)
        return t.Decision(
            address=t.AddressChoice_FromPool(input.pools[0].name),
            ports=[t.PortDecision(service_port=p.port, protocol=p.protocol, listen_port=p.port,
                                  profile=t.AppProfile.L4_TCP, certificate=None,
                                  health_monitor=t.HealthMonitor.TCP,
                                  algorithm=t.PoolAlgorithm.LEAST_CONNECTIONS,
                                  monitor=None)
                   for p in input.service.ports],
            warnings=[], preserve_client_ip=False, traffic=[],
            service_engine_group=None, ip_mode=t.IpMode.PROXY, hostname=None,
            retain_address=False, node_selector=[])
