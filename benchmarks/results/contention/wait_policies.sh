#!/bin/bash
# OpenMP wait policies at one and two torch threads, quiet and with one busy companion process.
# LIBGOMP_DEFAULT=1 only labels the row with no policy set; `segmenter.encoder.wait_policy` chooses between
# that row's policy and PASSIVE at start-up. Run alone on the machine, from anywhere; prints one line
# per setting (training/thread_speed.py: chars/s of the default preset on EWT test clean at 1, 2, 1, 2
# threads in one process).
cd "$(dirname "$0")/../../.."
for busy in 0 1; do
  if [ $busy = 1 ]; then .venv/bin/python -c "while True: pass" & SPINNER=$!; sleep 1; fi
  for setting in OMP_WAIT_POLICY=PASSIVE LIBGOMP_DEFAULT=1 GOMP_SPINCOUNT=1000 GOMP_SPINCOUNT=10000 \
      GOMP_SPINCOUNT=30000 GOMP_SPINCOUNT=100000; do
    echo "busy=$busy $setting $(env -u OMP_WAIT_POLICY $setting .venv/bin/python training/thread_speed.py 2>/dev/null | tr '\n' ' ')"
  done
  if [ $busy = 1 ]; then kill $SPINNER; fi
done
