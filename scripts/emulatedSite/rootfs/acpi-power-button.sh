#!/bin/sh
# The ACPI power button (a BMC's GracefulShutdown): flush what was written and power off.
sync
poweroff -f
