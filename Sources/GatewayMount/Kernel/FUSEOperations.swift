import CFuse
import Foundation

/// The low-level operations table handed to libfuse: each entry reads the request's arguments
/// and passes them to the ``MountFileSystem`` the session carries as user data. Nothing here
/// blocks: whatever needs the remote runs in a task and answers later.
enum FUSEOperations {
    static func fileSystem(_ request: fuse_req_t?) -> MountFileSystem {
        Unmanaged<MountFileSystem>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    static func table() -> fuse_lowlevel_ops {
        var operations = fuse_lowlevel_ops()
        operations.`init` = { userdata, connection in
            guard let connection else { return }
            // Listings hand out entries with their attributes (no request per name) while the
            // program looks at them (`ls -l`); the kernel's automatic mode switches a folder to
            // plain names when it does not (`find -type f`), so a walk of a large tree does not
            // make an inode per entry.
            if connection.pointee.capable & UInt32(FUSE_CAP_READDIRPLUS) != 0 {
                connection.pointee.want |= UInt32(FUSE_CAP_READDIRPLUS)
            }
            if connection.pointee.capable & UInt32(FUSE_CAP_READDIRPLUS_AUTO) != 0 {
                connection.pointee.want |= UInt32(FUSE_CAP_READDIRPLUS_AUTO)
            }
            // Reads stay asynchronous (libfuse's default): the kernel's read-ahead keeps several
            // requests in flight, so the reply to one overlaps the fetch of the next. A handle
            // answers them one at a time and continues its stream across the small disorder
            // (OpenFile.streamSlack); 1 GiB sequentially then takes ~25 ranged requests.
            connection.pointee.max_readahead = 1 << 20
        }
        operations.lookup = { request, parent, name in
            guard let request, let name else { return }
            FUSEOperations.fileSystem(request).lookup(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name))
        }
        operations.forget = { request, inode, count in
            guard let request else { return }
            FUSEOperations.fileSystem(request).forget(UInt64(inode), count: count)
            fuse_reply_none(request)
        }
        operations.forget_multi = { request, count, forgets in
            guard let request else { return }
            let fileSystem = FUSEOperations.fileSystem(request)
            if let forgets {
                for index in 0..<count { fileSystem.forget(UInt64(forgets[index].ino), count: forgets[index].nlookup) }
            }
            fuse_reply_none(request)
        }
        operations.getattr = { request, inode, _ in
            guard let request else { return }
            FUSEOperations.fileSystem(request).getattr(FUSERequest(raw: request), inode: UInt64(inode))
        }
        operations.open = { request, inode, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).open(FUSERequest(raw: request), inode: UInt64(inode), flags: info.pointee.flags)
        }
        operations.read = { request, _, size, offset, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).read(FUSERequest(raw: request), handle: info.pointee.fh, offset: Int64(offset), size: size)
        }
        operations.release = { request, _, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).release(FUSERequest(raw: request), handle: info.pointee.fh)
        }
        operations.opendir = { request, inode, _ in
            guard let request else { return }
            FUSEOperations.fileSystem(request).opendir(FUSERequest(raw: request), inode: UInt64(inode))
        }
        operations.readdir = { request, _, size, offset, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).readdir(FUSERequest(raw: request), handle: info.pointee.fh, offset: Int64(offset), size: size,
                                                       plus: false)
        }
        operations.readdirplus = { request, _, size, offset, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).readdir(FUSERequest(raw: request), handle: info.pointee.fh, offset: Int64(offset), size: size,
                                                       plus: true)
        }
        operations.releasedir = { request, _, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).releasedir(FUSERequest(raw: request), handle: info.pointee.fh)
        }
        operations.create = { request, parent, name, _, info in
            guard let request, let name, let info else { return }
            FUSEOperations.fileSystem(request).create(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name),
                                                      flags: info.pointee.flags)
        }
        operations.write = { request, _, buffer, size, offset, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).write(FUSERequest(raw: request), handle: info.pointee.fh,
                                                     bytes: UnsafeRawBufferPointer(start: buffer, count: size), offset: Int64(offset))
        }
        operations.flush = { request, _, _ in
            guard let request else { return }
            fuse_reply_err(request, 0)
        }
        operations.fsync = { request, _, _, info in
            guard let request, let info else { return }
            FUSEOperations.fileSystem(request).fsync(FUSERequest(raw: request), handle: info.pointee.fh)
        }
        operations.setattr = { request, inode, attributes, fields, _ in
            guard let request, let attributes else { return }
            FUSEOperations.fileSystem(request).setattr(FUSERequest(raw: request), inode: UInt64(inode), attributes: attributes.pointee,
                                                       fields: fields)
        }
        operations.mkdir = { request, parent, name, _ in
            guard let request, let name else { return }
            FUSEOperations.fileSystem(request).mkdir(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name))
        }
        operations.unlink = { request, parent, name in
            guard let request, let name else { return }
            FUSEOperations.fileSystem(request).unlink(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name))
        }
        operations.rmdir = { request, parent, name in
            guard let request, let name else { return }
            FUSEOperations.fileSystem(request).rmdir(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name))
        }
        operations.rename = { request, parent, name, newParent, newName, flags in
            guard let request, let name, let newName else { return }
            FUSEOperations.fileSystem(request).rename(FUSERequest(raw: request), parent: UInt64(parent), name: String(cString: name),
                                                      newParent: UInt64(newParent), newName: String(cString: newName), flags: flags)
        }
        operations.statfs = { request, _ in
            guard let request else { return }
            FUSEOperations.fileSystem(request).statfs(FUSERequest(raw: request))
        }
        // Symbolic links where the provider keeps them (FileProviderSymbolicLinks: Local);
        // elsewhere `symlink` is refused with EPERM, as vfat does.
        operations.symlink = { request, target, parent, name in
            guard let request, let target, let name else { return }
            FUSEOperations.fileSystem(request).symlink(FUSERequest(raw: request), target: String(cString: target), parent: UInt64(parent),
                                                       name: String(cString: name))
        }
        operations.readlink = { request, inode in
            guard let request else { return }
            FUSEOperations.fileSystem(request).readlink(FUSERequest(raw: request), inode: UInt64(inode))
        }
        // The mount's own extended attributes (user.gateway.*: an item's state, its pin, the
        // status of the mount); other names are not kept (ENODATA, ENOTSUP).
        operations.getxattr = { request, inode, name, size in
            guard let request, let name else { return }
            // Other names are answered here, at once, and the kernel keeps no answer of ours.
            // Only the user namespace is kept: other namespaces (security.selinux and
            // system.posix_acl_access, which `ls -l` asks of every file) answer ENOTSUP, which
            // ls remembers for the whole device instead of asking again per file.
            if strncmp(name, "user.gateway.", 13) != 0 {
                fuse_reply_err(request, strncmp(name, "user.", 5) == 0 ? ENODATA : ENOTSUP)
                return
            }
            FUSEOperations.fileSystem(request).getxattr(FUSERequest(raw: request), inode: UInt64(inode), name: String(cString: name), size: size)
        }
        operations.listxattr = { request, inode, size in
            guard let request else { return }
            FUSEOperations.fileSystem(request).listxattr(FUSERequest(raw: request), inode: UInt64(inode), size: size)
        }
        operations.setxattr = { request, inode, name, value, size, _ in
            guard let request, let name else { return }
            let data = value.map { Data(bytes: $0, count: size) } ?? Data()
            FUSEOperations.fileSystem(request).setxattr(FUSERequest(raw: request), inode: UInt64(inode), name: String(cString: name), value: data)
        }
        operations.removexattr = { request, inode, name in
            guard let request, let name else { return }
            FUSEOperations.fileSystem(request).removexattr(FUSERequest(raw: request), inode: UInt64(inode), name: String(cString: name))
        }
        // Hard links (which Local and some SFTP servers make: FileProviderHardLinks), device nodes
        // and FIFOs are refused as vfat does: the mount keeps one name per inode.
        operations.link = { request, _, _, _ in fuse_reply_err(request, EPERM) }
        operations.mknod = { request, _, _, _, _ in fuse_reply_err(request, EPERM) }
        return operations
    }
}
