//! sst-dumpi's binary traces (the format of SST and CODES): a `.meta` file and one
//! `PREFIX-NNNN.bin` per rank, read natively ([`read`]) with the record layouts of
//! [`layout`].

pub mod layout;
pub mod read;
