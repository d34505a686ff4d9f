import Foundation

/// Where a reporter's updates go: the URL, or only its text. Through the in-memory doubles a
/// reporter keeps the URL, as reading it again from its text would add to every update of a
/// simulation. Over a network, where the update's task reads it again at a cost the update
/// does not show, a reporter keeps only the text: the URL takes about 460 bytes a vehicle, its
/// text about 130.
enum UpdateAddress: Sendable {
    case url(URL)
    case text(String)

    /// The text of `url`, in a string of its own size, when reading it again gives `url`;
    /// else `url` itself.
    init(textOf url: URL) {
        let text = String(decoding: Array(url.absoluteString.utf8), as: UTF8.self)
        self = URL(string: text) == url ? .text(text) : .url(url)
    }

    /// The URL, read again from its text if only that is kept; `nil` if the text no longer
    /// reads (it cannot: ``init(textOf:)`` keeps only a text that reads).
    var url: URL? {
        switch self {
        case .url(let url): url
        case .text(let text): URL(string: text)
        }
    }
}
