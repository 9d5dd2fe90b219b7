"""The workspace profile, computed where the files are: language versions and frameworks from
manifests, style from formatter configs, the tools the workspace uses; kept fresh by watchdog."""
