//! A userspace link emulator over real UDP: datagrams between two
//! endpoints cross emulated forward and reverse links (rate, delay, queue,
//! loss, reordering) built from the emulator's queue components.
