public import GatewayMedia

/// Thumbnails and metadata (the shared ``RangedMediaProvider``) over `REST` + `RETR` ranges.
extension FTPProvider: RangedMediaProvider {}
