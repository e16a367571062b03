//! Object summaries: the row of a state node whose last holder went, written to the
//! objects file (in blocks) when the node is released.

use super::files::Objects;
use super::session::{level, Session};
use super::thread::with_session;
use crate::config::{Format, Level};
use crate::tree::{Kind, Node};
use h5prov_format::{column_index, ObjectSummaryRef, OBJECT_COLUMNS};
use parking_lot::Mutex;

/// Writes the summary row of a state node whose last holder went ([`crate::tree::release`]).
pub fn object_summary(n: &Node) {
    // Before the row reads the node, and whatever the level: the deferred work also lets
    // go of what it holds (a property list).
    n.describe_deferred();
    if level() == Level::Off {
        return;
    }
    with_session(|s, _| summary_of(s, n));
}

fn summary_of(s: &Session, n: &Node) {
    let Some(objects) = s.objects.as_ref() else {
        return;
    };
    let min = match n.kind {
        Kind::File => Level::Summary,
        Kind::Group => Level::Group,
        Kind::Request | Kind::None => return,
        _ => Level::Summary,
    };
    if s.cfg.level < min && s.cfg.level != Level::Summary {
        return;
    }
    let st = n.stats.lock().clone();
    let open_ns = if n.kind == Kind::File && st.open_ns == 0 {
        st.last_ns.saturating_sub(st.first_ns)
    } else {
        st.open_ns
    };
    let shape = n.shape.lock();
    let Some(shape) = shape.as_ref() else {
        // Files: where they live and how they were opened.
        let (mut align_buf, mut fs_buf) = ([0u8; 42], [0u8; 20]);
        let desc = Desc {
            align: st
                .align
                .map_or("", |(t, a)| join_pair(&mut align_buf, t, a)),
            fs: st
                .fs_magic
                .map_or("", |m| crate::tree::fs_name(m, &mut fs_buf)),
            cache: st.chunk_cache.as_deref().unwrap_or(""),
            libver: st.libver.unwrap_or(""),
            // Once per file row: the state the process's last close left it in.
            at_close: if n.kind == Kind::File {
                crate::tree::FileStat::of(std::path::Path::new(&*n.file_name)).unwrap_or_default()
            } else {
                crate::tree::FileStat::default()
            },
            ..Desc::default()
        };
        return write_summary(s, objects, n, &st, &desc, open_ns);
    };
    let (mut dims_buf, mut chunk_buf, mut ftype_buf) = ([0u8; 32 * 21], [0u8; 32 * 21], [0u8; 40]);
    let mut desc = Desc {
        dims: join_dims(&mut dims_buf, &shape.dims),
        type_size: shape.type_size,
        layout: shape.layout,
        ..Desc::default()
    };
    // The storage description is about datasets (attributes have no DCPL).
    if n.kind == Kind::Dataset {
        desc.chunk = join_dims(&mut chunk_buf, &shape.chunk);
        desc.ftype = shape.ftype.map_or("", |t| t.name(&mut ftype_buf));
        desc.filters = &shape.filters;
        desc.fill_time = shape.fill_time;
        desc.alloc_time = shape.alloc_time;
        desc.fill = shape.fill;
        desc.cache = &shape.cache;
    }
    write_summary(s, objects, n, &st, &desc, open_ns);
}

/// `threshold:alignment` into `buf`, without allocating.
fn join_pair(buf: &mut [u8; 42], a: u64, b: u64) -> &str {
    let mut len = 0;
    for (i, v) in [a, b].into_iter().enumerate() {
        if i > 0 {
            buf[len] = b':';
            len += 1;
        }
        let mut digits = itoa::Buffer::new();
        let text = digits.format(v).as_bytes();
        buf[len..len + text.len()].copy_from_slice(text);
        len += text.len();
    }
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// `10x20` into `buf`, without allocating: at most 32 dimensions of 20 digits.
fn join_dims<'b>(buf: &'b mut [u8; 32 * 21], dims: &[u64]) -> &'b str {
    let mut len = 0;
    for (i, d) in dims.iter().enumerate() {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(*d).as_bytes();
        let sep = usize::from(i > 0);
        if len + sep + text.len() > buf.len() {
            break;
        }
        if sep == 1 {
            buf[len] = b'x';
        }
        buf[len + sep..len + sep + text.len()].copy_from_slice(text);
        len += sep + text.len();
    }
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// The shape columns of an objects-file row.
#[derive(Default)]
struct Desc<'a> {
    dims: &'a str,
    type_size: u64,
    layout: &'static str,
    chunk: &'a str,
    ftype: &'a str,
    filters: &'a str,
    fill_time: &'static str,
    alloc_time: &'static str,
    fill: &'static str,
    cache: &'a str,
    align: &'a str,
    fs: &'a str,
    libver: &'static str,
    at_close: crate::tree::FileStat,
}

/// Encodes one objects-file row straight into the pending block.
fn write_summary(
    s: &Session,
    objects: &Mutex<Objects>,
    n: &Node,
    st: &crate::tree::Stats,
    d: &Desc<'_>,
    open_ns: u64,
) {
    let mut token = [0u8; 52];
    let row = ObjectSummaryRef {
        rank: s.rank,
        pid: s.pid,
        kind: n.kind.name(),
        file: &n.file_name,
        path: n.path(),
        token: n.token_hex(&mut token),
        opens: st.opens,
        accesses: st.accesses,
        reads: st.reads,
        writes: st.writes,
        bytes_read: st.bytes_read,
        bytes_written: st.bytes_written,
        read_ns: st.read_ns,
        write_ns: st.write_ns,
        first_ns: st.first_ns,
        last_ns: st.last_ns,
        dims: d.dims,
        type_size: d.type_size,
        layout: d.layout,
        ind_io: st.ind_io,
        coll_io: st.coll_io,
        broken_coll_io: st.broken_coll_io,
        created: u8::from(st.created),
        dsets_created: st.dsets_created,
        dsets_opened: st.dsets_opened,
        groups_created: st.groups_created,
        groups_opened: st.groups_opened,
        open_ns,
        chunk: d.chunk,
        ftype: d.ftype,
        filters: d.filters,
        fill_time: d.fill_time,
        alloc_time: d.alloc_time,
        cache: d.cache,
        file_bytes_read: st.file_bytes_read,
        file_bytes_written: st.file_bytes_written,
        mpio: u8::from(st.mpio),
        align: d.align,
        fs: d.fs,
        fill: d.fill,
        libver: d.libver,
        dev: st.at_open.map_or(0, |a| a.dev),
        ino: st.at_open.map_or(0, |a| a.ino),
        open_size: st.at_open.map_or(0, |a| a.size),
        open_mtime_ns: st.at_open.map_or(0, |a| a.mtime_ns),
        close_size: d.at_close.size,
        close_mtime_ns: d.at_close.mtime_ns,
        intent: st.intent.name(),
        stored_bytes: st.stored_bytes,
    };
    let mut g = objects.lock();
    let Objects { buf: out, bin, .. } = &mut *g;
    match s.cfg.format {
        Format::Csv => {
            // `write_csv` is not inlined here and reads the row through a reference, so
            // the row must be in memory: a copy made in this arm keeps those stores off
            // the binary and JSONL paths (with the shared `row` in memory, they cost the
            // binary encoding ~117 instructions per row).
            let copy = row;
            copy.write_csv(out)
        }
        Format::Jsonl => row.write_jsonl(out),
        // The node's keys, as for its trace records: most rows then find their kind and
        // file without hashing them, and their path once.
        Format::Bin => row.write_bin_keyed(out, bin, |c| {
            const KIND: usize = column_index(OBJECT_COLUMNS, "kind");
            const FILE: usize = column_index(OBJECT_COLUMNS, "file");
            const PATH: usize = column_index(OBJECT_COLUMNS, "path");
            match c {
                KIND => n.kind.name_key(),
                FILE => n.file_key,
                PATH => n.path_key(),
                _ => 0,
            }
        }),
    }
    if g.buf.len() >= s.threshold {
        s.drain_objects(&mut g);
    }
}
