"""What both pipelines share: the narrow ``Backend`` interface they run on (jobs, results,
metrics), its implementation over the real engine and cache, and single flight."""
