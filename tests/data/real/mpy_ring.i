/* Small Message Passing Yorick (mpy) program for the cdag MPI recorder.
   Included on all ranks with "mpy -j mpy_ring.i"; mpy_main.i (run with -batch on rank 0) starts it. */
func ring_task(nround)
{
  /* ring: each rank sends to its right neighbour, receives from its left */
  right = (mp_rank+1) % mp_size;
  left  = (mp_rank+mp_size-1) % mp_size;
  val = double(mp_rank+1);
  for (i=1 ; i<=nround ; i++) {
    mp_send, right, [val, double(i)];
    m = mp_recv(left);
    val = m(1) + 1.0;
  }
  /* any-order gather on rank 0 using mp_probe (wildcard probe) */
  if (mp_rank) {
    mp_send, 0, [mp_rank*10.0, val];
  } else {
    got = 0;  acc = 0.0;
    while (got < mp_size-1) {
      who = mp_probe(1);
      for (k=1 ; k<=numberof(who) ; k++) { x = mp_recv(who(k)); acc += x(1); got++; }
    }
    write, format="gathered %d messages, acc=%g\n", got, acc;
  }
  /* fan-out broadcast and fan-in sum (point-to-point trees inside mpy) */
  msg = mp_rank ? [] : [3.0, 4.0];
  mp_handout, msg;
  total = mp_handin(sum(msg) + mp_rank);
  if (!mp_rank) write, format="handout/handin total=%g (size=%d)\n", total, mp_size;
}
