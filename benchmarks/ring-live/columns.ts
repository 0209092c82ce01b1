/**
 * The ring-live table's names. On the LAN the ring and Gloo share the links; over the cables they do not (Gloo's
 * full mesh binds one interface, the LAN, since a ring of cables joins only neighbours), and the names say so, so
 * that a ratio across two networks is never read as one engine against the other.
 */
export interface GlooColumns {
  readonly title: string;
  readonly ring: string;
  readonly gloo: string;
  readonly ratio: string;
}

export function glooColumns(over: 'lan' | 'p2p', ringRate: string, lanRate: string): GlooColumns {
  if (over === 'lan')
    return {
      title: `switched LAN at ${lanRate}, ring and Gloo on the same links`,
      ring: 'ring busbw Gbit/s (LAN)',
      gloo: 'gloo busbw Gbit/s (LAN)',
      ratio: 'ring/gloo, same links',
    };
  return {
    title: `ring on p2p cables at ${ringRate}, Gloo on the LAN at ${lanRate}: different links`,
    ring: `ring busbw Gbit/s (${ringRate} cables)`,
    gloo: `gloo busbw Gbit/s (${lanRate} LAN)`,
    ratio: 'ring (cables) / gloo (LAN), different links',
  };
}
