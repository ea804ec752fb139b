"""The trace format: operation records, headers, text and binary files, and their checks.

Owns the record layout shared with the C++ replayer (``record``), the header and its codec, the
readers and writers (``io``, ``text``, ``binary``, ``stl``), validation and statistics. It may
import ``files``, ``units`` and ``errors``; dataflows write traces and the replayer reads them.
"""
