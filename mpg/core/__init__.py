"""What every part of mpg shares, with the standard library alone: the errors a user can fix
(`errors`), where a location is (`locations`: local or object storage, the pointer's name),
a package's names imported when first used (`lazy`), and which code produced a table
(`version`).

Nothing here imports a third-party module (tests/unit/test_layers.py), so that any part may
import it at module level, and `mpg --help` or a one-line error costs no more than Python's
start-up. The loading of `sql/` files lives with the files (`mpg.sql.files`), the output
folder's layout in `mpg.output`, storage in `mpg.storage`.
"""
