#!/usr/bin/env bash
# The full run of the value round trip (Tests/MapcKitTests/ValueRoundTripTests.swift): the edge
# values of every attribute type and N more of each type drawn at random (seeded), in stores of
# both formats, through the compiled step, the interpreted step, a custom policy that copies, a
# conversion to the other format and back, and dump then load. Each value must come out with the
# same bytes, or every path must refuse it. `swift test` runs the edge values alone.
#
# Usage: Benchmarks/value-roundtrip.sh [N]   (default 500 values per type)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
MAPC_VALUE_ROUNDTRIP="${1:-500}" swift test --filter ValueRoundTripTests
