// The kernel's struct linux_dirent64, which getdents64 fills (glibc declares none before 2.30):
// list_dir.cc and proc_places.cc read directories with getdents64 straight on a descriptor,
// without the fstat and fcntl calls fdopendir/readdir add.
#pragma once
#include <cstdint>

namespace arb {

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

}  // namespace arb
