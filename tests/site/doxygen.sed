# Doxygen's INPUT_FILTER (Doxyfile): the labels that open the paragraphs of a `///` block (Shapes, Errors,
# Source, Example) are shown in bold, on the same line, so line numbers in warnings stay true.
s#^([[:space:]]*///[[:space:]]*)(Shapes|Element type|Errors|Thrown|Source|Example|Threads):#\1<b>\2:</b>#
