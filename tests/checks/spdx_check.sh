#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every file of the project states its license (scripts/spdx.sh --check): a new source,
# header, script or build file without its SPDX line fails make test. Exits 77 (skipped) when
# the source tree is not a git checkout, as in a tarball. Usage: spdx_check.sh SOURCE_DIR
set -eu
exec "$1/scripts/spdx.sh" --check
