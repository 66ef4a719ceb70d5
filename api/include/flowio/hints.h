// Hints: string key/value pairs, as MPI_Info carries them, given to
// File::open or File::set_view. Unknown keys are ignored, as MPI says.
// ROMIO's names are used where ROMIO has the same hint.
//
// System hints file: File::open also applies the hints of the file named
// by the environment variable FLOWIO_HINTS, else ROMIO_HINTS (the one
// MPICH's MPI-IO reads), else /etc/romio-hints if it exists. Lines are
// "key value"; '#' at the start of a line makes it a comment; a line of
// one word or of more than two is ignored, and a key set again keeps its
// first value (both printed to stderr by rank 0 of MPI_COMM_WORLD). The
// file is read once per process, at its first open. A key the program
// passes to open keeps the program's value; a value flowio refuses in the
// file fails open as the program's would (invalid_hint), the message
// naming the file.
//
// Storage
//   flowio_io_backend        "auto" (default), "io_uring" or "posix" (the
//                            environment variable FLOWIO_IO_BACKEND overrides
//                            "auto").
//   flowio_direct_io         "enable": requests whose offset, length and memory
//                            are 4096-aligned go through a second, O_DIRECT
//                            descriptor (DMA, no copy through the page cache);
//                            the others stay buffered. Reported "disable"
//                            where the file system refuses O_DIRECT.
//   flowio_mapped_io         "enable" (default) or "disable": small calls
//                            (up to 1 MiB) inside the file that read, or
//                            rewrite a part of the file accessed before, load
//                            from or store into a kept shared mapping of the
//                            file instead of making a system call, on file
//                            systems with one page cache for all processes
//                            (ext4, xfs, btrfs, tmpfs, f2fs; not NFS). Never
//                            with flowio_direct_io.
// Collective I/O
//   cb_buffer_size           bytes of file each aggregator handles per buffer
//                            iteration (default 16 MiB).
//   flowio_buffers_in_flight iterations pipelined at once (default 3); memory
//                            is bounded by cb_buffer_size times this.
//   cb_nodes                 number of aggregators (default: all processes).
//   flowio_aggregators       which ranks aggregate, as "0,2,5" (overrides the
//                            default spread; cb_nodes then takes the first n).
//   romio_cb_write,          "automatic" (default): each process accesses the
//   romio_cb_read            file itself when every process's data is one
//                            contiguous piece or its pieces are large (mean >=
//                            flowio_direct_threshold, default 1 MiB),
//                            else two-phase I/O; "enable": always two-phase;
//                            "disable": never.
//   flowio_direct_threshold  that piece size in bytes.
// Independent I/O
//   ind_rd_buffer_size,      the largest file extent one batch of an
//   ind_wr_buffer_size       independent read (write) spans, which bounds
//                            its staging buffer (default 16 MiB each; at
//                            most 1 GiB). A piece longer than this is a
//                            batch of its own.
//   romio_no_indep_rw        "true" or "false" (default): the program's
//                            promise that it makes no independent
//                            accesses, with which ROMIO opens the file on
//                            its aggregators only. flowio opens it on every
//                            process in one step anyway: reported, no
//                            effect. Other values are ignored (reported
//                            "false"), as ROMIO ignores them.
//   flowio_realm_policy      "even" (default: the aggregate access region split
//                            evenly), "aligned" (boundaries on multiples of
//                            romio_cb_fr_alignment or striping_unit),
//                            "persistent" (same as romio_cb_pfr=enable),
//                            "load_balanced" (equal data bytes per aggregator),
//                            "datatype" (realms described by datatypes, fixed
//                            for the file: flowio_realm_stripe's stripes, or
//                            File::set_file_realms, which overrides every
//                            realm hint while it is in force).
//   flowio_realm_stripe      bytes: datatype realms of round-robin stripes,
//                            stripe k = [k * bytes, (k + 1) * bytes) to
//                            aggregator k mod cb_nodes (implies "datatype";
//                            another flowio_realm_policy with it is refused).
//   romio_cb_fr_alignment,   realm boundary alignment in bytes.
//   striping_unit
//   romio_cb_pfr             "enable": persistent file realms anchored at byte 0,
//                            fixed at the first collective call, kept until close.
//   romio_cb_fr_type         ROMIO's realm type, read only with romio_cb_pfr=enable
//                            (as ROMIO does): a size in bytes gives stripes of
//                            that size (rounded up to romio_cb_fr_alignment),
//                            as flowio_realm_stripe; 0 (default), -1 and -2 keep
//                            persistent realms (-2, the program's realm types,
//                            is File::set_file_realms here).
//   romio_ds_write,          "automatic" (default): sieve (read-modify-write of
//   romio_ds_read            the covering extent) when the mean distance between
//                            pieces is below flowio_ds_threshold, else vectored
//                            I/O; "enable" / "disable" force it.
//   flowio_ds_threshold      that distance in bytes (default 16384 for writes,
//                            4096 for reads: the crossovers bench/sieve
//                            measured on the development machine).
//   flowio_ds_mapping        "automatic" (default): sieve extents of 1 MiB or
//                            more that lie inside the file and mostly in the
//                            page cache through a shared mapping of the file
//                            (pieces stored into the page cache, no
//                            read-modify-write copies), where the file is a
//                            regular file opened read-write without direct
//                            I/O; "enable": every sieved extent the file
//                            allows; "disable": always read and write calls.
//                            A page a mapping cannot bring in (a device
//                            error) fails the call with IoError (EIO), as a
//                            read or write call would. flowio installs a
//                            SIGBUS handler for this at the first mapping;
//                            faults elsewhere go to the handler there before.
//   flowio_exchange          "point_to_point" (default) or "alltoallw".
//   flowio_durable           "enable" or "disable" (default): a collective
//                            write completes only once every process that
//                            wrote has fdatasync'd the file, inside the
//                            operation (a nonblocking write's sync overlaps
//                            the caller's computation).
//   flowio_write_behind      bytes (default 0: off; the environment's
//                            FLOWIO_WRITE_BEHIND gives a default): a
//                            blocking collective write (write_all,
//                            write_at_all, the ordered one) returns once
//                            every process has found its arguments good
//                            and its data is copied, and is written in the
//                            background while the program goes on; with
//                            flowio_durable, it makes no copy and returns
//                            once this process's data is in the page
//                            cache or sent on (the buffer may then be
//                            reused), its sync still to come. Writes in
//                            flight stay within this many data bytes (a
//                            write waits for the oldest until it fits; a
//                            larger one runs as without the hint).
//                            The file ends up the same. This process's
//                            later reads and writes see its writes (an
//                            independent access waits for those whose
//                            bytes it meets; collective calls are ordered
//                            by the engine); sync, close, set_size,
//                            preallocate, set_view, set_hints,
//                            set_atomicity, size and the shared pointer's
//                            calls wait for all of them. Other processes
//                            see the data after sync-barrier-sync or
//                            close-open, as MPI says. A write that fails
//                            reports its error (naming the write) on every
//                            process alike: at the next call that waits
//                            for every write (sync, close, set_view, ...),
//                            or earlier at a write behind once every
//                            process knows of it (which then does not
//                            start). Off in atomic mode and for data
//                            converted to another representation. Must be
//                            on on every process or on none.
//   flowio_plan_cache        compiled collective plans kept per file
//                            (default 4; 0: every call compiles its plan).
//   flowio_compress          "auto" (default), "on" or "off": LZO1X-1
//                            compression of the data exchanged point to
//                            point (not in Alltoallw rounds or direct mode).
//                            auto never compresses to a process of the same
//                            node reached through shared memory (a copy
//                            outruns the codec); for the others it decides
//                            per aggregator and message from
//                            the measured link, a sample of the message and
//                            the codec's measured speed, and stops where
//                            whole exchanges went no faster compressed; on
//                            compresses every message at least
//                            flowio_compress_min_bytes long (sent raw when
//                            it does not shrink); off sends bare messages.
//                            Must be the same on every process.
//                            OperationStatistics::compression reports it.
//   flowio_compress_min_bytes  messages shorter than this are never
//                            compressed (default 65536).
// Atomic mode (File::set_atomicity; read when it is turned on)
//   flowio_lock              "hybrid" (default), "one_sided", "mcs": flowio's
//                            locks over MPI (sync/): the seed paper's hybrid
//                            algorithm (a waitlist word updated with one-sided
//                            atomics, hand-off by message), its one-sided
//                            algorithm (hand-off polled: a waiting process
//                            burns a core), an MCS queue lock (constant memory
//                            per process); "fcntl": the file system's locks,
//                            as MPICH's MPI-IO takes them, for comparison.
//   flowio_lock_ranges       "enable" (default): each access locks the bytes it
//                            spans, so that disjoint accesses proceed in
//                            parallel; "disable": every access locks the whole
//                            file.
#pragma once

#include <map>
#include <string>

namespace flowio {

using Hints = std::map<std::string, std::string>;

}  // namespace flowio
