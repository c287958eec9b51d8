// koffi keeps named types for the whole process, so a binding module evaluated twice in one process
// (the CLI's own copy and Vitest's module runner's copy, as under `disagg-bench run`, where the run
// plan probes the transport libraries before Vitest loads the same modules again) would define each
// name a second time and fail. A second definition takes the first's type: same name, same layout.
import koffi from 'koffi';

type KoffiType = ReturnType<typeof koffi.type>;

function existing(name: string): KoffiType | undefined {
  try {
    return koffi.type(name);
  } catch {
    return undefined;
  }
}

/** koffi.struct(name, def), or the type of that name defined earlier in this process. */
export function namedStruct(name: string, def: Record<string, Parameters<typeof koffi.type>[0] | [number, Parameters<typeof koffi.type>[0]]>): KoffiType {
  return existing(name) ?? koffi.struct(name, def);
}

/** koffi.proto('ret name(args)'), or the function type of that name defined earlier in this process. */
export function namedProto(signature: string): KoffiType {
  const name = /([A-Za-z_]\w*)\s*\(/.exec(signature)?.[1];
  return (name && existing(name)) || koffi.proto(signature);
}
