// libnvidia-ml (NVML) through koffi: device count and names (by index or PCI bus id), for GPU
// listings, GPU-type detection and the record of each rank's GPU.
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary } from './load.ts';

export interface Nvml {
  init(): void;
  shutdown(): void;
  deviceCount(): number;
  deviceName(index: number): string;
  /** The name of the device at a PCI bus id (as cudaDeviceGetPCIBusId gives it). */
  deviceNameByBusId(busId: string): string;
  driverVersion(): string;
}

export const nvml = lazyBinding((): Nvml => {
  const lib = openLibrary('nvml', ['libnvidia-ml.so.1', 'libnvidia-ml.so']);
  const f = {
    init: lib.func('int nvmlInit_v2(void)'),
    shutdown: lib.func('int nvmlShutdown(void)'),
    error_string: lib.func('const char *nvmlErrorString(int result)'),
    device_get_count: lib.func('int nvmlDeviceGetCount_v2(_Out_ unsigned int *count)'),
    device_get_handle_by_index: lib.func('int nvmlDeviceGetHandleByIndex_v2(unsigned int index, _Out_ void **device)'),
    device_get_handle_by_pci_bus_id: lib.func('int nvmlDeviceGetHandleByPciBusId_v2(const char *busId, _Out_ void **device)'),
    device_get_name: lib.func('int nvmlDeviceGetName(void *device, _Out_ uint8_t *name, unsigned int length)'),
    system_get_driver_version: lib.func('int nvmlSystemGetDriverVersion(_Out_ uint8_t *version, unsigned int length)'),
  };
  const check = (rc: number, call: string): void => {
    if (rc !== 0) throw new NativeCallError('nvml', call, rc, f.error_string(rc) as string);
  };
  const cString = (buf: Buffer) => buf.toString('utf8', 0, Math.max(0, buf.indexOf(0)));
  const nameOf = (device: bigint | null, which: string): string => {
    const name = Buffer.alloc(256);
    check(f.device_get_name(device, name, name.length), `nvmlDeviceGetName(${which})`);
    return cString(name);
  };
  return {
    init: () => check(f.init(), 'nvmlInit_v2'),
    shutdown: () => check(f.shutdown(), 'nvmlShutdown'),
    deviceCount() {
      const count = [0];
      check(f.device_get_count(count), 'nvmlDeviceGetCount_v2');
      return count[0];
    },
    deviceName(index) {
      const device: [bigint | null] = [null];
      check(f.device_get_handle_by_index(index, device), `nvmlDeviceGetHandleByIndex_v2(${index})`);
      return nameOf(device[0], String(index));
    },
    deviceNameByBusId(busId) {
      const device: [bigint | null] = [null];
      check(f.device_get_handle_by_pci_bus_id(busId, device), `nvmlDeviceGetHandleByPciBusId_v2(${busId})`);
      return nameOf(device[0], busId);
    },
    driverVersion() {
      const version = Buffer.alloc(96);
      check(f.system_get_driver_version(version, version.length), 'nvmlSystemGetDriverVersion');
      return cString(version);
    },
  };
});

/** Names of all GPUs NVML sees, e.g. ['NVIDIA H200', 'NVIDIA H200']; throws the reason when NVML is missing. */
export function nvmlDeviceNames(): string[] {
  const n = nvml();
  n.init();
  try {
    return Array.from({ length: n.deviceCount() }, (_, i) => n.deviceName(i));
  } finally {
    n.shutdown();
  }
}
