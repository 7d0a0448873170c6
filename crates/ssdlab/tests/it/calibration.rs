//! The softssd preset's software NVMe path alone (FTL bypassed) handles about 25,000
//! commands per second, as measured on the SoftSSD board (PRESETS.md).

use firmware::platform::StoreChoice;

#[test]
fn softssd_host_interface_alone_handles_about_25k_commands_per_second() {
    let mut cfg = firmware::presets::get("softssd").unwrap().unwrap();
    cfg.ftl.bypass = true;
    let jobs = [crate::experiments::job("rw=randread bs=16k iodepth=16 numjobs=12 number_ios=1500")];
    let r = ssdlab::simulate(&cfg, &jobs, 1, &StoreChoice::Metadata, &mut |_| {}).unwrap();
    let iops = r.total.iops;
    assert!((iops / 25_000.0 - 1.0).abs() < 0.05, "{iops:.0} commands/s");
    // At 16 KiB that is about 400 MB/s, the published figure.
    assert!((r.total.mb_per_s / 400.0 - 1.0).abs() < 0.05, "{:.0} MB/s", r.total.mb_per_s);
}
