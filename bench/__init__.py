"""The benchmarks: `python -m bench` lists them, `python -m bench NAME` runs one."""
