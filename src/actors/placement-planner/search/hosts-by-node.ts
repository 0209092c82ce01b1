/** exo's placeholder for ranks that are not neighbours (RFC 5737 TEST-NET-2). */
export const PLACEHOLDER_HOST = { ip: '198.51.100.1', port: 0 } as const;

export interface Host {
  readonly ip: string;
  readonly port: number;
}

/**
 * MLX ring hosts: for rank r a list of worldSize hosts: itself on 0.0.0.0:port, its two ring neighbours at the
 * address r uses to reach them, every other rank the placeholder. `addressOf(from, to)` gives the chosen IP.
 */
export function ringHostsByNode(
  order: readonly string[],
  port: number,
  addressOf: (from: string, to: string) => string,
): Record<string, Host[]> {
  const ws = order.length;
  const out: Record<string, Host[]> = {};
  order.forEach((node, rank) => {
    const prev = (rank - 1 + ws) % ws,
      next = (rank + 1) % ws;
    out[node] = order.map((other, index) => {
      if (index === rank) return { ip: '0.0.0.0', port };
      if (index === prev || index === next) return { ip: addressOf(node, other), port };
      return { ...PLACEHOLDER_HOST };
    });
  });
  return out;
}
