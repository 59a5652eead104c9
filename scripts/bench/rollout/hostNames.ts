/** The bench's host ids (`rh-0000`, `rh-0001`, …): sortable, and each a valid resource id. */
export const hostName = (i: number) => `rh-${String(i).padStart(4, '0')}`;
