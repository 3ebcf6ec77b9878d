/// The keyboard as the apps' editor and chat handled it: show and hide events carrying the
/// keyboard's height, and what moves in response.
///
/// While the keyboard is up (a repeated "show" — the system sends one per frame change — only
/// updates the height) the chat view moves up by the keyboard height and the article editor's
/// bottom inset is the keyboard height + 5. When it goes down, everything returns: offset 0, the
/// editor's inset 46. (The search panel follows the keyboard itself, and only while it is shown:
/// see ``SearchPanel``.)
///
/// ```swift
/// var keyboard = KeyboardModel()
/// try keyboard.show(keyboardHeight: 336)   // editorBottomInset == 341, chatOffset == -336
/// keyboard.hide()                          // editorBottomInset == 46
/// ```
public struct KeyboardModel: Equatable, Sendable {
    /// Between the editor's text and the top of the keyboard.
    public static let editorGapAboveKeyboard = 5.0
    /// The editor's bottom inset while the keyboard is down (room for its toolbar).
    public static let editorRestingInset = 46.0
    /// The tallest keyboard accepted.
    public static let maxKeyboardHeight = 10_000.0

    public private(set) var isShown = false
    /// The keyboard's height while shown, 0 while hidden.
    public private(set) var keyboardHeight = 0.0

    public init() {}

    /// A model in a given state (`keyboardHeight` ignored when not shown).
    public init(isShown: Bool, keyboardHeight: Double) throws {
        if isShown { try show(keyboardHeight: keyboardHeight) }
    }

    /// The keyboard appeared, or changed its frame, with this height. `.validation` unless finite
    /// and within 0...10000.
    public mutating func show(keyboardHeight height: Double) throws {
        try Self.check(height)
        isShown = true
        keyboardHeight = height
    }

    static func check(_ height: Double) throws {
        guard height.isFinite, height >= 0, height <= KeyboardModel.maxKeyboardHeight else {
            throw NotesError.validation("keyboard_height", "keyboard_height must be a number of pixels between 0 and \(Int(KeyboardModel.maxKeyboardHeight)), got \(height)")
        }
    }

    /// The keyboard went down. Hiding a hidden keyboard does nothing.
    public mutating func hide() {
        isShown = false
        keyboardHeight = 0
    }

    /// The article editor's bottom content inset.
    public var editorBottomInset: Double {
        isShown ? keyboardHeight + KeyboardModel.editorGapAboveKeyboard : KeyboardModel.editorRestingInset
    }
    /// The chat view's vertical offset: up by the keyboard height while it is shown.
    public var chatOffset: Double { isShown ? -keyboardHeight : 0 }

    /// What the keyboard does.
    public enum Event: Equatable, Sendable {
        case show(keyboardHeight: Double), hide
    }

    /// Applies one event: ``show(keyboardHeight:)`` or ``hide()``.
    public mutating func apply(_ event: Event) throws {
        switch event {
        case let .show(height): try show(keyboardHeight: height)
        case .hide: hide()
        }
    }
}

/// The notes app's search panel, as its list controller moved it (MDSArticleListViewController,
/// MDSSearchView).
///
/// Positions are the panel's top edge relative to the screen's bottom edge, in screen coordinates
/// (y grows downward, so above the bottom is negative): ``topOffset``. At rest the panel is
/// hidden with a 50-point strip showing (−50) or shown (−155: 105 more). A pan gesture reports
/// its **total** translation since the drag began: while it changes, the top is where the panel
/// last came to rest (hidden, shown, or above the keyboard) plus that translation (not clamped,
/// as in the app), and the search
/// field's keyboard is dismissed. When the drag ends the panel snaps shown if at least 91 of its
/// 105 points are revealed above the strip, else hidden. Moves requested while dragging
/// (``show()``, ``hide()``, keyboard events) are ignored.
///
/// Only while shown does the panel follow the keyboard: "will show" puts it right above the
/// keyboard (−(155 + height)) and lays one tap mask under it (the old one removed first: iOS 8
/// sent "will show" three times for a Chinese keyboard); "will hide" removes the mask and sends
/// the panel back to **hidden**.
///
/// ```swift
/// var panel = SearchPanel()
/// try panel.drag(translation: -60)
/// try panel.drag(translation: -95)   // topOffset == -145: total translation, not increments
/// panel.endDrag()                    // .shown (95 ≥ 91 revealed), topOffset == -155
/// ```
public struct SearchPanel: Equatable, Sendable {
    public enum State: String, Sendable {
        case hidden, shown
    }

    /// The panel's height.
    public static let height = 105.0
    /// What shows of the panel at rest, hidden.
    public static let strip = 50.0
    /// Revealed at least this much above the strip when the drag ends, the panel snaps open.
    public static let snapThreshold = 91.0
    /// The largest translation or offset accepted, in points.
    public static let maxDistance = 1_000_000.0

    /// Where the panel rests (during a drag: where it will go back to if nothing else happens).
    public private(set) var state: State = .hidden
    public private(set) var isDragging = false
    /// The panel's top edge relative to the screen's bottom edge (negative: above it).
    public private(set) var topOffset = -SearchPanel.strip
    /// The top offset the current drag began at.
    public private(set) var dragStartOffset = -SearchPanel.strip
    /// Whether the search field's keyboard is up, as the panel last heard.
    public private(set) var isKeyboardShown = false
    /// The keyboard's height while it is up, else 0.
    public private(set) var keyboardHeight = 0.0
    /// Tap masks under the panel: 1 while it is shown over the keyboard, else 0 — never more.
    public private(set) var maskCount = 0

    public init() {}

    /// A panel in a given state, as ``topOffset`` and the others report it (offsets left nil: the
    /// state's resting offset). `.validation` for a non-finite or out-of-range number, or a mask
    /// count other than 0 or 1.
    public init(state: State, isDragging: Bool = false, topOffset: Double? = nil, dragStartOffset: Double? = nil,
                isKeyboardShown: Bool = false, keyboardHeight: Double = 0, maskCount: Int = 0) throws {
        let topOffset = topOffset ?? SearchPanel.restingOffset(state)
        let dragStartOffset = dragStartOffset ?? SearchPanel.restingOffset(state)
        for (name, value) in [("top_offset", topOffset), ("drag_start_offset", dragStartOffset)] {
            guard value.isFinite, abs(value) <= SearchPanel.maxDistance else {
                throw NotesError.validation(name, "\(name) must be a number of points within ±\(Int(SearchPanel.maxDistance)), got \(value)")
            }
        }
        try KeyboardModel.check(keyboardHeight)
        guard maskCount == 0 || maskCount == 1 else {
            throw NotesError.validation("mask_count", "mask_count is 0 or 1, got \(maskCount)")
        }
        self.state = state
        self.isDragging = isDragging
        self.topOffset = topOffset
        self.dragStartOffset = dragStartOffset
        self.isKeyboardShown = isKeyboardShown
        self.keyboardHeight = isKeyboardShown ? keyboardHeight : 0
        self.maskCount = maskCount
    }

    /// The top offset of a panel at rest in `state`.
    public static func restingOffset(_ state: State) -> Double {
        state == .shown ? -(strip + height) : -strip
    }

    /// How much of the panel shows above the strip: 0 hidden, 105 shown (more above a keyboard).
    public var revealed: Double { -topOffset - SearchPanel.strip }

    /// The pan gesture changed: `translation` is its total vertical translation since the drag
    /// began (screen coordinates: negative is up). The first call of a drag begins it and
    /// dismisses the keyboard. `.validation` unless finite and within ±1 000 000.
    public mutating func drag(translation: Double) throws {
        guard translation.isFinite, abs(translation) <= SearchPanel.maxDistance else {
            throw NotesError.validation("translation", "translation must be a number of points within ±\(Int(SearchPanel.maxDistance)), got \(translation)")
        }
        if !isDragging {
            isDragging = true
            dragStartOffset = topOffset // where the last move left it (the app's searchViewLastY)
        }
        if isKeyboardShown { keyboardWillHide() } // dismissed; the move it asks for is ignored
        topOffset = dragStartOffset + translation
    }

    /// The finger lifted: the panel snaps shown when at least ``snapThreshold`` is revealed,
    /// hidden otherwise. Returns where it rests. Outside a drag it does nothing.
    @discardableResult
    public mutating func endDrag() -> State {
        guard isDragging else { return state }
        isDragging = false
        state = revealed >= SearchPanel.snapThreshold ? .shown : .hidden
        topOffset = SearchPanel.restingOffset(state)
        if state == .hidden { maskCount = 0 }
        return state
    }

    /// Opens the panel (ignored while dragging).
    public mutating func show() {
        guard !isDragging else { return }
        state = .shown
        topOffset = SearchPanel.restingOffset(.shown)
    }

    /// Closes the panel (ignored while dragging); it stops following the keyboard.
    public mutating func hide() {
        guard !isDragging else { return }
        state = .hidden
        topOffset = SearchPanel.restingOffset(.hidden)
        maskCount = 0
    }

    /// The keyboard will show with this height (again, when its frame changes). A shown panel
    /// moves right above it and lays its tap mask (one, however many times this comes); a hidden
    /// one does not listen. `.validation` unless the height is within 0...10000.
    public mutating func keyboardWillShow(height: Double) throws {
        try KeyboardModel.check(height)
        isKeyboardShown = true
        keyboardHeight = height
        guard state == .shown else { return }
        maskCount = 1
        guard !isDragging else { return }
        topOffset = SearchPanel.restingOffset(.hidden) - (height + SearchPanel.height)
    }

    /// The keyboard will hide. A shown panel removes its tap mask and goes back to hidden (unless
    /// a drag is moving it).
    public mutating func keyboardWillHide() {
        isKeyboardShown = false
        keyboardHeight = 0
        guard state == .shown else { return }
        maskCount = 0
        guard !isDragging else { return }
        state = .hidden
        topOffset = SearchPanel.restingOffset(.hidden)
    }

    /// What happens to the panel.
    public enum Event: Equatable, Sendable {
        case drag(translation: Double), endDrag, show, hide, keyboardWillShow(height: Double), keyboardWillHide
    }

    /// Applies one event: the method of the same name.
    public mutating func apply(_ event: Event) throws {
        switch event {
        case let .drag(translation): try drag(translation: translation)
        case .endDrag: endDrag()
        case .show: show()
        case .hide: hide()
        case let .keyboardWillShow(height): try keyboardWillShow(height: height)
        case .keyboardWillHide: keyboardWillHide()
        }
    }
}
