"""The migration scanner: what in a Python file ties it to CUDA, its rules, fixes, reports and command
line. Needs only kb.core (packaged alone as torchtpu-scan).
"""
