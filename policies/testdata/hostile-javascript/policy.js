// A JavaScript policy that misbehaves on request, to prove the sandbox
// contains componentize-js components as it contains Rust ones.
//
// The config is a JSON object: {"do": "<behaviour>", "port": <loopback port>}.

const BEHAVIOURS = ['ok', 'fetch', 'fetch-name', 'loop', 'oom', 'print-flood'];

function settings(config) {
  const raw = JSON.parse(config);
  if (!BEHAVIOURS.includes(raw.do)) {
    throw { payload: `do must be one of ${BEHAVIOURS.join(', ')}, got ${raw.do}` };
  }
  return raw;
}

/** A request started: its outcome is what the host answered, if it settles. */
function request(url) {
  let outcome = 'pending';
  try {
    fetch(url).then(
      (response) => { outcome = `succeeded: ${response.status}`; },
      (error) => { outcome = `denied: ${error}`; },
    );
  } catch (error) {
    outcome = `denied: ${error}`;
  }
  return () => outcome;
}

export const policy = {
  describe() {
    return { name: 'hostile-javascript', version: '0.1.0' };
  },
  validateConfig(config) {
    settings(config);
  },
  decide(config, input) {
    const raw = settings(config);
    switch (raw.do) {
      case 'fetch': {
        const outcome = request(`http://127.0.0.1:${raw.port}/`);
        throw { payload: { tag: 'other', val: `fetch ${outcome()}` } };
      }
      case 'fetch-name': {
        const outcome = request('http://localhost/');
        throw { payload: { tag: 'other', val: `fetch-name ${outcome()}` } };
      }
      case 'loop': {
        let n = 0;
        for (;;) n += 1;
      }
      case 'oom': {
        const hoard = [];
        for (;;) hoard.push(new Uint8Array(1 << 20).fill(1));
      }
      case 'print-flood':
        for (;;) console.log('flood '.repeat(100));
      default:
        return {
          address: { tag: 'from-pool', val: input.pools[0].name },
          ports: input.service.ports.map((p) => ({
            servicePort: p.port, protocol: p.protocol, listenPort: p.port, profile: 'l4-tcp',
            healthMonitor: 'tcp', algorithm: 'least-connections', monitor: undefined,
          })),
          warnings: [],
          preserveClientIp: false,
          traffic: [],
          serviceEngineGroup: undefined,
          ipMode: 'proxy',
          hostname: undefined,
          retainAddress: false,
          nodeSelector: [],
        };
    }
  },
};
