import { parseWorkers } from './workers';

describe('parseWorkers', () => {
  it('reads id=host:port and host:port entries, the address standing in for a missing id', () => {
    expect(parseWorkers(['sim-0=127.0.0.1:50053', 'gpu-host.internal:7000', 'v6=[::1]:9000'])).toEqual([
      { id: 'sim-0', address: '127.0.0.1:50053' },
      { id: 'gpu-host.internal:7000', address: 'gpu-host.internal:7000' },
      { id: 'v6', address: '[::1]:9000' },
    ]);
  });

  it('accepts an empty list', () => {
    expect(parseWorkers([])).toEqual([]);
  });

  it('names the entry when its syntax or port is wrong', () => {
    expect(() => parseWorkers(['a=127.0.0.1'])).toThrow(
      "INFERENCE_WORKERS[0] 'a=127.0.0.1': expected id=host:port or host:port",
    );
    expect(() => parseWorkers(['ok:1', 'b=host:99999'])).toThrow(
      "INFERENCE_WORKERS[1] 'b=host:99999': port must be 1-65535",
    );
    expect(() => parseWorkers(['b=host:12x'])).toThrow(/port must be 1-65535/);
    expect(() => parseWorkers(['=host:1'])).toThrow(/id must be/);
  });

  it('rejects a repeated id or address', () => {
    expect(() => parseWorkers(['a=h:1', 'a=h:2'])).toThrow(
      "INFERENCE_WORKERS[1] 'a=h:2': worker id 'a' is listed twice",
    );
    expect(() => parseWorkers(['a=h:1', 'b=h:1'])).toThrow(/address 'h:1' is listed twice/);
  });
});
