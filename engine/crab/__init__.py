"""The CRAB3 layer: tasks, splitting, DAG creation, PreJob/PostJob/RetryJob and the dataset catalogue."""
