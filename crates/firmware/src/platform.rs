//! Assembling a simulated device from its configuration: the simulation, its controller cores,
//! the flash array over the chosen page store, and the FIL on its core.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use nand::FlashArray;
use nand::store::{ImageError, ImageStore, MemoryStore, MetaStore, PageStore};
use sim::{CoreId, Sim};

use crate::config::DeviceConfig;
use crate::fil::Fil;

/// Where page data lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreChoice {
    /// No payloads, tags only: large devices and fast sweeps.
    Metadata,
    /// Payloads in RAM.
    Memory,
    /// A NAND image file; `create` makes a fresh one, otherwise an existing one is reopened.
    Image {
        /// The image file.
        path: PathBuf,
        /// Create (or truncate) rather than reopen.
        create: bool,
    },
}

/// A device under simulation: the executor, the cores and the FIL over the flash array.
pub struct Platform {
    /// The simulation (shared when several devices run in one, as behind a bridge).
    pub sim: Rc<Sim>,
    /// The controller cores, in configuration order.
    pub cores: Vec<CoreId>,
    /// The flash interface layer.
    pub fil: Fil,
    /// The configuration it was built from.
    pub config: DeviceConfig,
}

impl Platform {
    /// Builds a device from a validated configuration, the FIL on the core its architecture
    /// names.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<Platform, ImageError> {
        Platform::build_in(&Rc::new(Sim::new(seed)), cfg, store, cfg.architecture.fil_core())
    }

    /// [`build`](Self::build) in an existing simulation (its cores are added to it), the FIL on
    /// core `fil_core` (`None`: the flash controller's own sequencer schedules it).
    pub fn build_in(
        sim: &Rc<Sim>,
        cfg: &DeviceConfig,
        store: &StoreChoice,
        fil_core: Option<usize>,
    ) -> Result<Platform, ImageError> {
        let geo = cfg.geometry.clone();
        let array = match store {
            StoreChoice::Metadata => FlashArray::new(geo.clone(), boxed(MetaStore::new(&geo))),
            StoreChoice::Memory => FlashArray::new(geo.clone(), boxed(MemoryStore::new(&geo))),
            StoreChoice::Image { path, create: true } => FlashArray::new(
                geo.clone(),
                boxed(ImageStore::create_with_parity(
                    path,
                    &geo,
                    crate::checkpoint::aux_bytes(&geo),
                    cfg.ecc.parity_layout(),
                )?),
            ),
            StoreChoice::Image { path, create: false } => {
                let scanned = ImageStore::open(path, &geo)?;
                let kept = scanned.store.parity_layout();
                if let Some(wanted) = cfg.ecc.parity_layout()
                    && kept != Some(wanted)
                {
                    let why = match kept {
                        None => format!(
                            "it keeps no ECC parity (it was made without ecc.errors, or by a build before \
                             parity was kept), which ecc.errors needs ({wanted}): make a new image, or turn \
                             ecc.errors off"
                        ),
                        Some(k) => format!(
                            "it keeps the parity of {k}, but the configuration's ECC is {wanted}: make a new \
                             image, or set ecc.codeword and ecc.correctable to the image's"
                        ),
                    };
                    return Err(ImageError::Invalid { path: path.clone(), why });
                }
                scanned.into_array(geo)
            }
        };
        Ok(Platform::over_in(sim, cfg, array, fil_core))
    }

    /// The platform for `cfg` (validated) over an existing array of its geometry.
    pub fn over(cfg: &DeviceConfig, array: FlashArray, seed: u64) -> Platform {
        Platform::over_in(&Rc::new(Sim::new(seed)), cfg, array, cfg.architecture.fil_core())
    }

    /// [`over`](Self::over) in an existing simulation, the FIL on core `fil_core`.
    pub fn over_in(
        sim: &Rc<Sim>,
        cfg: &DeviceConfig,
        array: FlashArray,
        fil_core: Option<usize>,
    ) -> Platform {
        assert_eq!(array.geometry(), &cfg.geometry, "the array was made for another geometry");
        let mut array = array;
        // A payload store keeps the parity of the image's code (so that every page of the
        // image has it, whatever this run's ECC does), else of the error model's code if on.
        if array.keeps_payload() && array.parity().is_none() {
            let layout = array.store().parity_layout().or(cfg.ecc.parity_layout());
            array.set_parity(layout).unwrap_or_else(|e| panic!("ECC parity: {e}"));
        }
        let sim = sim.clone();
        let cores: Vec<CoreId> = cfg.controller.cores.iter().map(|c| sim.add_core(c.clone())).collect();
        let fil = Fil::start(
            &sim.cx(),
            fil_core.map_or(CoreId::UNBOUND, |i| cores[i]),
            &cfg.fil,
            cfg.timing_model(),
            Rc::new(RefCell::new(array)),
        );
        Platform { sim, cores, fil, config: cfg.clone() }
    }
}

fn boxed(s: impl PageStore + 'static) -> Box<dyn PageStore> {
    Box::new(s)
}
