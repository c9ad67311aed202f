"""`python -m mpg.cli`: the `mpg` command, for a process that has no console script on its PATH
(tests, workers). Guarded, so that importing every module of the package runs nothing."""

from mpg.cli import script

if __name__ == "__main__":
    script()
