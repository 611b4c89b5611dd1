//! Where each function of the shared libraries a program has mapped lives:
//! for a kernel whose module NVBit cannot dump (library kernels, loaded
//! lazily), [`crate::prefill::at_launch`] finds its code, and that of the
//! functions it calls, here. Built in the background from the libraries'
//! fat binaries (every cubin of the device's target, read and inflated
//! once); it keeps only each function's container, and reads that
//! container again when a function is looked up. Libraries mapped after
//! it was built are indexed when a name is not found. Module images the
//! program loads from memory ([`crate::module_image`]) are added as they
//! are loaded and read at the next look-up; their functions are kept.

use crate::fatbin::{self, DeviceFunction};
use crate::{mapped, module_image};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A fat binary container: file, offset and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Container {
    file: usize,
    offset: u64,
    size: u64,
}

/// Module images kept unread at most (see [`LibraryIndex::add_image`]).
pub const UNREAD_IMAGES: usize = 16;

/// Where an indexed function's code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In a container of a library file, read again when looked up.
    File(Container),
    /// The `.1`-th function of the `.0`-th module image loaded from memory.
    Image(usize, usize),
}

#[derive(Debug, Default)]
struct Indexed {
    files: Vec<PathBuf>,
    by_name: HashMap<String, Place>,
    /// The functions of the module images read so far.
    images: Vec<Vec<DeviceFunction>>,
    /// Module images loaded since the last look-up, not read yet.
    unread: Vec<Vec<u8>>,
}

/// The functions of the target `sm` in the libraries indexed so far.
#[derive(Debug, Clone)]
pub struct LibraryIndex {
    sm: u32,
    indexed: Arc<Mutex<Indexed>>,
    /// Whether a thread is indexing libraries now.
    busy: Arc<AtomicBool>,
    /// Files left out (the program's own file).
    skip: PathBuf,
}

impl LibraryIndex {
    /// An empty index for target `sm`, leaving out the program's file `exe`.
    pub fn new(sm: u32, exe: PathBuf) -> LibraryIndex {
        let skip = std::fs::canonicalize(&exe).unwrap_or(exe);
        LibraryIndex { sm, indexed: Arc::default(), busy: Arc::default(), skip }
    }

    /// Index the libraries mapped now that are not indexed yet, on a
    /// thread of its own (unless one is at it already).
    pub fn update_in_background(&self) {
        if self.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        let this = self.clone();
        let spawned = std::thread::Builder::new().name("xfpx-library-index".into()).spawn(move || {
            this.update(&mapped::files_with_device_code(u64::MAX));
            this.busy.store(false, Ordering::Release);
        });
        if spawned.is_err() {
            self.busy.store(false, Ordering::Release);
        }
    }

    /// Index `files` not indexed yet (the program's file left out): the
    /// containers are read in order and their cubins inflated and listed
    /// on as many threads as the prefill runs disassemblers (half the CPUs, at most 8).
    pub fn update(&self, files: &[PathBuf]) {
        let known: HashSet<PathBuf> = match self.indexed.lock() {
            Ok(g) => g.files.iter().cloned().collect(),
            Err(_) => return,
        };
        let workers = super::jobs_for(std::thread::available_parallelism().map_or(2, usize::from));
        for file in files {
            let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
            if known.contains(file) || canonical == self.skip {
                continue;
            }
            let Some(range) = mapped::fatbin_section(file) else { continue };
            let index = match self.indexed.lock() {
                Ok(mut g) => {
                    g.files.push(file.clone());
                    g.files.len() - 1
                }
                Err(_) => return,
            };
            let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<u8>)>(2 * workers);
            let rx = Mutex::new(rx);
            std::thread::scope(|s| {
                for _ in 0..workers {
                    s.spawn(|| loop {
                        let next = rx.lock().ok().and_then(|r| r.recv().ok());
                        let Some((offset, container)) = next else { return };
                        let Ok(names) = fatbin::function_names_for_target(&container, self.sm) else { continue };
                        let at = Container { file: index, offset, size: container.len() as u64 };
                        if let Ok(mut g) = self.indexed.lock() {
                            for name in names {
                                g.by_name.entry(name).or_insert(Place::File(at));
                            }
                        }
                    });
                }
                let _ = mapped::for_each_container(file, range, u64::MAX, |offset, container| {
                    tx.send((offset, container.to_vec())).is_ok()
                });
                drop(tx);
            });
        }
    }

    /// The code of each of `names` the index knows (read again from its
    /// container); when some is not known, libraries mapped since are
    /// indexed in the background.
    pub fn functions(&self, names: &[&str]) -> Vec<DeviceFunction> {
        self.read_images();
        let mut out = Vec::new();
        let (places, missing) = {
            let Ok(g) = self.indexed.lock() else { return Vec::new() };
            let mut places: Vec<(PathBuf, Container)> = Vec::new();
            let mut found = 0;
            for place in names.iter().filter_map(|n| g.by_name.get(*n)) {
                found += 1;
                match *place {
                    Place::File(c) => places.push((g.files[c.file].clone(), c)),
                    Place::Image(image, at) => out.push(g.images[image][at].clone()),
                }
            }
            (places, found < names.len())
        };
        if missing {
            self.update_in_background();
        }
        let mut read: HashSet<Container> = HashSet::new();
        for (file, c) in places {
            if !read.insert(c) {
                continue;
            }
            let range = mapped::SectionRange { offset: c.offset, size: c.size };
            let _ = mapped::for_each_container(&file, range, c.size, |_, container| {
                if let Ok((functions, _)) = fatbin::functions_for_target(container, self.sm) {
                    out.extend(functions.into_iter().filter(|f| names.contains(&f.name.as_str())));
                }
                false
            });
        }
        out
    }

    /// Keep a copy of a module image the program loads from memory (read
    /// at the next look-up, or now once [`UNREAD_IMAGES`] wait: a program
    /// that loads many images and looks nothing up keeps their functions
    /// for the target, not every image whole).
    pub fn add_image(&self, image: Vec<u8>) {
        let waiting = match self.indexed.lock() {
            Ok(mut g) => {
                g.unread.push(image);
                g.unread.len()
            }
            Err(_) => return,
        };
        if waiting >= UNREAD_IMAGES {
            self.read_images();
        }
    }

    /// Read the module images added since the last look-up: their
    /// functions for the index's target are kept and named.
    fn read_images(&self) {
        let unread = match self.indexed.lock() {
            Ok(mut g) => std::mem::take(&mut g.unread),
            Err(_) => return,
        };
        for image in unread {
            let functions = module_image::functions(&image, self.sm);
            let Ok(mut g) = self.indexed.lock() else { return };
            let at = g.images.len();
            for (i, f) in functions.iter().enumerate() {
                g.by_name.entry(f.name.clone()).or_insert(Place::Image(at, i));
            }
            g.images.push(functions);
        }
    }

    /// Module images read so far, and the functions they hold.
    pub fn images(&self) -> (usize, usize) {
        self.indexed.lock().map_or((0, 0), |g| (g.images.len(), g.images.iter().map(Vec::len).sum()))
    }

    /// Functions indexed so far.
    pub fn len(&self) -> usize {
        self.indexed.lock().map_or(0, |g| g.by_name.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
