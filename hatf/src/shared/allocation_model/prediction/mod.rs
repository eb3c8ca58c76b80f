//! The model's predictions: where the next block goes and which site and size come next, and
//! the tables those lookups use (the live blocks a free is ranked among are `shared::live_set`).

pub mod addresses;
pub mod recent_values;
pub mod site_and_address;
pub mod sites;
