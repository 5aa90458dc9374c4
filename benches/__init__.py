"""pytest-benchmark suites: msgwire beside its peers (figures in README.md)."""
