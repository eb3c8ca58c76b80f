//! The model's predictions: where the next block goes, which site and size come next, the live
//! blocks a free is ranked among, and the tables those lookups use.

pub mod addresses;
pub mod key_table;
pub mod live_addresses;
pub mod live_blocks;
pub mod recent_values;
pub mod site_and_address;
pub mod sites;
