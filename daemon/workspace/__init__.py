"""The workspace profile, computed where the files are and kept fresh by watchdog.
Language versions and frameworks from manifests, style from formatter configs, the tools used.
"""
