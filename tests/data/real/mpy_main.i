/* runs on rank 0 only; starts the parallel task on every rank */
mp_exec, "ring_task, 3;";
quit;
