"""The user's files: bounded reading of every input and safe writing of every output.

Owns the one bounded reader (regular files only, size/depth/digit caps, UTF-8 checked,
``bounded_input``) and atomic, checked output files (``output_file``). It imports only
``errors``; every other folder reads and writes files through it.
"""
