public import GatewayMedia

/// Thumbnails and metadata (the shared ``RangedMediaProvider``) over ranged `GET`s.
extension WebDAVProvider: RangedMediaProvider {}
