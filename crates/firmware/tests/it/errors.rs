//! The firmware's typed errors say what the strings they replaced said (issue 26): the CLI
//! prints these texts as they are, so each is compared in full.

use std::path::PathBuf;

use firmware::checkpoint::CheckpointError;
use firmware::device::{DeviceError, Unusable};
use firmware::ftl::{MountError, PreconditionError};
use nand::Lpn;

fn io() -> std::io::Error {
    std::io::Error::other("disk on fire")
}

#[test]
fn mount_errors_read_as_before() {
    let cases: [(MountError, &str); 7] = [
        (MountError::Hints { hints: 3, blocks: 4 }, "3 block hints for 4 blocks"),
        (
            MountError::NoSuchTranslationPage { unit: 7, tpage: 9 },
            "unit 7 holds translation page 9, which this mapping configuration does not have",
        ),
        (
            MountError::TranslationPageTwice { tpage: 2, units: [5, 8] },
            "translation page 2 is valid in units 5 and 8",
        ),
        (
            MountError::BeyondCapacity { unit: 11, lpn: Lpn(300), logical: 256 },
            "unit 11 holds LPN 300, beyond this configuration's 256 logical units",
        ),
        (MountError::LpnTwice { lpn: Lpn(4), units: [1, 6] }, "LPN 4 is valid in units 1 and 6"),
        (
            MountError::MissingTranslationPage { lpns: 0..4096, tpage: 0 },
            "LPNs 0..4096 have data but their translation page 0 is not on flash",
        ),
        (
            MountError::Rewrite(PreconditionError::TooFull("no free GC page in plane 3".into())),
            "rewriting the translation pages: the device is too full to age: no free GC page in plane 3; raise ftl.op or lower gc.soft_free",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}

#[test]
fn device_and_checkpoint_errors_read_as_before() {
    let path = PathBuf::from("ssd.img");
    let unusable = |source: Unusable| DeviceError::Unusable { path: path.clone(), source };
    assert_eq!(
        unusable(MountError::LpnTwice { lpn: Lpn(4), units: [1, 6] }.into()).to_string(),
        "ssd.img: not a usable ssdlab NAND image: LPN 4 is valid in units 1 and 6"
    );
    assert_eq!(
        unusable(CheckpointError::Io { doing: "reading", source: io() }.into()).to_string(),
        "ssd.img: not a usable ssdlab NAND image: reading the checkpoint: disk on fire"
    );
    assert_eq!(CheckpointError::NoImage.to_string(), "the device has no NAND image");
    assert_eq!(
        CheckpointError::TooSmall { has: 64, needs: 4160 }.to_string(),
        "the image has 64 bytes for checkpoints and needs 4160 (it was made by an older ssdlab); the next start recovers from the OOB"
    );
    assert_eq!(
        DeviceError::Checkpoint(CheckpointError::Io { doing: "writing", source: io() }).to_string(),
        "writing the checkpoint: disk on fire"
    );
    assert_eq!(
        DeviceError::StillBusy(sim::SimDuration::from_secs(10)).to_string(),
        "background work still running after 10s"
    );
    let e = DeviceError::MappingOut(PreconditionError::Store(io())).to_string();
    assert_eq!(e, "writing the mapping out: the page store failed while ageing the device: disk on fire");
}
