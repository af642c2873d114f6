public import GatewayMedia

/// Thumbnails and metadata through the shared implementation, over ranged reads.
extension SFTPProvider: RangedMediaProvider {}
