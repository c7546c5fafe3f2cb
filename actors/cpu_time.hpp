#pragma once
// CPU time of the calling thread and of the whole process, in seconds
// (clock_gettime). The worker's own accounting and sim.cost=measured read the
// thread's; calibrate's loopback exchange reads the process's.
#include <ctime>

namespace actors {

inline double cpu_seconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

inline double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }
inline double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }

} // namespace actors
