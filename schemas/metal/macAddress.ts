import { z } from 'zod';

/**
 * A MAC address, normalised by the schema to lower-case colon form: the form DHCP/PXE matching, NIC naming and the
 * inventory a BMC reports all use. Commands accept `-` separators and upper case; what is stored is always normalised.
 */
export const MacAddress = z
  .string()
  .regex(/^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/, 'must be a MAC address like 52:54:00:12:34:56')
  // overwrite, not transform: the normalised MAC is still a string, so API responses can encode it.
  .overwrite((mac) => mac.toLowerCase().replaceAll('-', ':'));
export type MacAddress = z.output<typeof MacAddress>;
